import { describe, expect, it } from "@effect/vitest"
import { activityChart } from "../../src/Pages/Chart.ts"

const day = (date: string, spentUsd: number, earnedUsd = 0) => ({ day: date, spentUsd, earnedUsd })

/** The y of the dashed cap line, and whether the caption names the cap as drawn or as above the chart. */
const capOf = (svg: string) => ({
  line: /<line class="cap"[^>]* y1="([\d.]+)"/.exec(svg)?.[1],
  drawnInLegend: /border-top-style:dashed"><\/span>Spend cap/.test(svg),
  above: svg.includes(": above the chart")
})

describe("the owner's activity chart", () => {
  it("draws the spend cap wherever it fits the scale, and names it in the legend", () => {
    // $13 spent of a $20 cap: the scale runs to $20, and the cap is its top line (it was left out as above it).
    const raised = capOf(activityChart([day("2026-11-30", 13)], 20))
    expect(raised).toMatchObject({ drawnInLegend: true, above: false })
    expect(raised.line).toBeDefined()
    // All of a $10 cap spent: drawn, and in the legend (the legend left it out).
    expect(capOf(activityChart([day("2026-11-30", 10)], 10))).toMatchObject({ drawnInLegend: true, above: false })
    // A cap far above what was spent would flatten the lines: named above the chart instead.
    const far = capOf(activityChart([day("2026-11-30", 1)], 1_000))
    expect(far).toEqual({ line: undefined, drawnInLegend: false, above: true })
  })

  it("names the agent's own days, not the day before its first activity the line rises from", () => {
    const one = activityChart([day("2026-11-30", 2)], 10)
    expect(one).toContain("From 2026-11-30 to 2026-11-30")
    expect(one).not.toContain("2026-11-29")
    const several = activityChart([day("2026-11-20", 2), day("2026-11-30", 1, 3)], 10)
    expect(several).toContain("From 2026-11-20 to 2026-11-30")
    expect(several).not.toContain("2026-11-19")
    expect(several).toMatch(/<text x="[\d.]+%" y="\d+" text-anchor="start">2026-11-20<\/text>/)
  })
})
