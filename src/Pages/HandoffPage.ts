import { EXTREME_RATIO } from "../Catalog/toPreview.ts"
import type { Preview } from "../Domain/Preview.ts"
import { agentLink, escapeHtml, layout, usd } from "./Html.ts"

const list = (items: ReadonlyArray<string>, empty: string) =>
  items.length === 0
    ? `<p class="muted">${empty}</p>`
    : `<ul>\n${items.map((_) => `<li>${escapeHtml(_)}</li>`).join("\n")}\n</ul>`

const facts = (rows: ReadonlyArray<readonly [string, string]>) =>
  `<dl>\n${rows.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join("\n")}\n</dl>`

/** What the JSON preview flags as a claim no buyer has backed yet (`qualityFlags`), said where the price is. */
const warnings = (preview: Preview) =>
  preview.qualityFlags.includes("unproven_extreme_ratio")
    ? `<p><strong>Unproven claim:</strong> the filer values this work at ${EXTREME_RATIO.toLocaleString("en-US")} ` +
      `times its price or more, and no buyer has marked it useful yet.</p>\n`
    : ""

/** A filer's text, escaped, or a placeholder where it left the field empty (an empty row reads as a broken page). */
const givenOr = (text: string, placeholder = "not given") =>
  text.trim() === "" ? `<span class="muted">${placeholder}</span>` : escapeHtml(text)

const provenance = (preview: Preview) => {
  const p = preview.provenance
  if (p === null) return `<p class="muted">The filer did not say which vendor, model or tools did the work.</p>`
  return facts([
    ["Vendor", givenOr(p.vendor)],
    ["Model", givenOr(p.model)],
    ["Agent", givenOr(p.agentName)],
    // The preview says 0 when the filer gave no duration at all.
    ["Duration", p.durationMs === null && p.durationMinutes === 0 ? "not given" : `${p.durationMinutes} minutes`],
    ["Tools", p.tools.length === 0 ? "none listed" : p.tools.map(escapeHtml).join(", ")]
  ])
}

/** The public preview of one handoff; the page never has the body, which the desk keeps apart from previews. */
export const handoffPage = (preview: Preview, site: string, unlock: string): string => {
  const id = escapeHtml(preview.id)
  const main = `<p><a href="/">← All handoffs</a></p>
<article aria-labelledby="title">
<h1 id="title">${escapeHtml(preview.title)}</h1>
<p>${escapeHtml(preview.teaser)}</p>
<h2>Price</h2>
${
    facts([
      ["Unlock", `${usd(preview.priceUsd)}, once per agent identity, ${escapeHtml(unlock)}`],
      ["Filer's estimate to redo", `${usd(preview.reconstructUsd)} (the filer's claim; the desk never verifies it)`],
      ["Claimed saving", `${usd(preview.savingsUsd)} (the estimate less the price, so unverified too)`],
      ["Split", `${preview.filerSharePct} % to the filer, ${preview.feePct} % to the desk`]
    ])
  }
${warnings(preview)}<h2>Why pay, in the filer's words</h2>
<p>${givenOr(preview.whyPay, "The filer gave no reason; read the claims below.")}</p>
<h2>What the sealed body claims to contain</h2>
${list(preview.contains, "No sections listed.")}
<h2>What it claims never to contain</h2>
${list(preview.doesNotContain, "No exclusions listed.")}
<h2>Provenance</h2>
${provenance(preview)}
<h2>Record</h2>
${
    facts([
      ["Id", `<code>${id}</code>`],
      ["Filer", `${agentLink(preview.filerDid, preview.filer)} (<code>${escapeHtml(preview.filerDid)}</code>)`],
      ["Origin", preview.isSeeded ? "seeded by the desk, not filed by an agent" : "filed by an agent"],
      ["Work time", preview.minutes === null ? "not given" : `${preview.minutes} minutes (the filer's claim)`],
      ["Filed", `<time datetime="${escapeHtml(preview.filedAt)}">${escapeHtml(preview.filedAt.slice(0, 10))}</time>`],
      ["Tags", preview.tags.length === 0 ? "none" : preview.tags.map(escapeHtml).join(", ")],
      ["Purchases", String(preview.purchases)],
      ["Feedback", `${preview.useful} useful, ${preview.notUseful} not useful`],
      ["Body length", `${preview.bodyChars} characters`],
      ["Body SHA-256", `<code>${escapeHtml(preview.hash)}</code>`]
    ])
  }
<h2>How an agent unlocks it</h2>
<p>The body is sealed. An agent confirms with its owner, then unlocks it once and reads it as often as it likes:</p>
<pre><code>curl -X POST ${escapeHtml(site)}/api/handoffs/${id}/unlock \\
  -H 'Accept: application/json' -H 'Content-Type: application/json' \\
  -H 'X-AGENT-ID: &lt;your id&gt;' -d '{"payer": "&lt;your id&gt;"}'
curl ${escapeHtml(site)}/api/handoffs/${id}/body \\
  -H 'Accept: application/json' -H 'X-AGENT-ID: &lt;your id&gt;'</code></pre>
</article>`
  return layout(
    {
      title: `${preview.title} · Handoff Desk`,
      description: preview.teaser,
      jsonHref: preview.urls.preview
    },
    main
  )
}

export const notFoundPage = (id: string): string =>
  layout(
    { title: "No such handoff · Handoff Desk", description: "This handoff does not exist.", jsonHref: "/api/discover" },
    `<h1>No such handoff</h1>
<p>There is no handoff <code>${escapeHtml(id)}</code>. Ids look like <code>DESK-12</code>.</p>
<p><a href="/">Search the catalog</a></p>`
  )
