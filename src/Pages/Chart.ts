import { escapeHtml, usd } from "./Html.ts"

export interface Day {
  readonly day: string
  readonly spentUsd: number
  readonly earnedUsd: number
}

const HEIGHT = 220
const TOP = 22
const BOTTOM = 30
const DAY_MS = 86_400_000

/** Spend in the desk's focus orange, earnings in its link blue: both above 4.5:1 on white. */
export const SPEND_COLOR = "#a34f00"
export const EARN_COLOR = "#0b4f9e"

const round = (value: number) => Math.round(value * 10) / 10

/** The smallest 1, 2 or 5 times a power of ten at or above `value`: axis labels a person reads at a glance. */
const niceCeiling = (value: number) => {
  const power = 10 ** Math.floor(Math.log10(value))
  return ([1, 2, 5, 10].find((step) => step * power >= value) ?? 10) * power
}

const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`)

const cumulative = (days: ReadonlyArray<Day>, pick: (day: Day) => number) => {
  let total = 0
  return days.map((day) => (total += pick(day)))
}

/**
 * Running totals of spend and earnings per UTC day, drawn on the server as SVG (no script): a step line per
 * series from zero the day before the first activity (the dates named are the activity's), the spend cap as a
 * dashed line, in the legend too, when it fits the scale.
 * Horizontal positions are percentages and the SVG has no viewBox, so it fills any width while its text keeps
 * its size: readable on a phone as on a desktop.
 */
export const activityChart = (days: ReadonlyArray<Day>, capUsd: number): string => {
  if (days.length === 0) return `<p class="muted">No purchases or sales yet: the chart starts with the first one.</p>`
  const spent = cumulative(days, (_) => _.spentUsd)
  const earned = cumulative(days, (_) => _.earnedUsd)
  const start = dayMs(days[0]!.day) - DAY_MS
  const end = dayMs(days.at(-1)!.day)
  const top = Math.max(spent.at(-1)!, earned.at(-1)!, 0.01)
  // The cap is drawn where it fits the scale the totals take, or stretches it by half at most.
  const scale = niceCeiling(top * 1.05)
  const showCap = capUsd > 0 && (capUsd <= scale || capUsd <= top * 1.5)
  const max = showCap && capUsd > scale ? niceCeiling(capUsd * 1.05) : scale
  const x = (ms: number) => `${round(1 + ((ms - start) / (end - start)) * 98)}%`
  const y = (usdValue: number) => round(TOP + (1 - usdValue / max) * (HEIGHT - TOP - BOTTOM))
  const segment = (x1: string, y1: number, x2: string, y2: number, color: string) =>
    `<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="${color}" stroke-width="2.5" stroke-linecap="round"/>`
  /** The running total holds until the next day with activity, then steps to its new value. */
  const steps = (values: ReadonlyArray<number>, color: string, name: string) => {
    const parts: Array<string> = []
    let previous = { x: x(start), y: y(0) }
    days.forEach((day, i) => {
      const at = x(dayMs(day.day))
      parts.push(segment(previous.x, previous.y, at, previous.y, color))
      if (y(values[i]!) !== previous.y) parts.push(segment(at, previous.y, at, y(values[i]!), color))
      parts.push(`<circle cx="${at}" cy="${y(values[i]!)}" r="3.5" fill="${color}"/>`)
      previous = { x: at, y: y(values[i]!) }
    })
    return `<g class="${name}">${parts.join("")}</g>`
  }
  const ticks = [0, max / 2, max].map((value) =>
    `<line x1="0" x2="100%" y1="${y(value)}" y2="${y(value)}" stroke="#d0d0d0"/>` +
    `<text x="0" y="${y(value) - 4}">${escapeHtml(usd(value))}</text>`
  )
  // The line rises from zero the day before the first activity; the dates named are the agent's own.
  const first = days[0]!.day
  const last = days.at(-1)!.day
  const firstAt = x(dayMs(first))
  const middle = new Date(start + Math.round((end - start) / 2 / DAY_MS) * DAY_MS).toISOString().slice(0, 10)
  const cap = showCap
    ? `<line class="cap" x1="0" x2="100%" y1="${y(capUsd)}" y2="${
      y(capUsd)
    }" stroke="${SPEND_COLOR}" stroke-dasharray="6 4"/>` +
      `<text x="100%" y="${y(capUsd) - 4}" text-anchor="end">spend cap ${escapeHtml(usd(capUsd))}</text>`
    : ""
  const summary =
    `From ${first} to ${last} this agent spent ${usd(spent.at(-1)!)} on other agents' handoffs and earned ${
      usd(earned.at(-1)!)
    } ` +
    `in total; the spend cap is ${usd(capUsd)}.`
  return `<figure class="chart">
<svg width="100%" height="${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" font-size="12" fill="#4d4d4d">
<title id="chart-title">Spend and earnings over time</title>
<desc id="chart-desc">${escapeHtml(summary)}</desc>
${ticks.join("\n")}
${cap}
${steps(spent, SPEND_COLOR, "spent")}
${steps(earned, EARN_COLOR, "earned")}
${first === last ? "" : `<text x="${firstAt}" y="${HEIGHT - 8}" text-anchor="start">${first}</text>`}
${end - start >= 4 * DAY_MS ? `<text x="50%" y="${HEIGHT - 8}" text-anchor="middle">${middle}</text>` : ""}
<text x="100%" y="${HEIGHT - 8}" text-anchor="end">${last}</text>
</svg>
<figcaption><span class="legend"><span class="key" style="border-color:${SPEND_COLOR}"></span>Spent (running total)</span>
<span class="legend"><span class="key" style="border-color:${EARN_COLOR}"></span>Earned (running total)</span>${
    capUsd <= 0
      ? ""
      : showCap
      ? `\n<span class="legend"><span class="key" style="border-color:${SPEND_COLOR};border-top-style:dashed"></span>` +
        `Spend cap ${escapeHtml(usd(capUsd))}</span>`
      : `\n<span class="legend">Spend cap ${escapeHtml(usd(capUsd))}: above the chart</span>`
  }
<span>Spent counts what it paid for other agents' handoffs.</span></figcaption>
</figure>
<details><summary>The numbers per day</summary>
<div class="table-wrap"><table>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Spent</th><th scope="col">Earned</th></tr></thead>
<tbody>
${
    days.map((day) => `<tr><td>${day.day}</td><td>${usd(day.spentUsd)}</td><td>${usd(day.earnedUsd)}</td></tr>`).join(
      "\n"
    )
  }
</tbody>
</table></div>
</details>`
}
