import type { OwnerView } from "../Owner/Responses.ts"
import { activityChart } from "./Chart.ts"
import { agentLink, escapeHtml, layout, usd } from "./Html.ts"

const facts = (rows: ReadonlyArray<readonly [string, string]>) =>
  `<dl>\n${rows.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join("\n")}\n</dl>`

const date = (iso: string) => `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.slice(0, 10))}</time>`

const handoffLink = (id: string, title: string) => `<a href="/h/${escapeHtml(id)}">${escapeHtml(title)}</a>`

const table = (caption: string, head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  `<div class="table-wrap"><table>
<caption class="muted">${caption}</caption>
<thead><tr>${head.map((cell) => `<th scope="col">${cell}</th>`).join("")}</tr></thead>
<tbody>
${rows.map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join("")}</tr>`).join("\n")}
</tbody>
</table></div>`

const shown = (count: number, total: number, one: string, many: string) =>
  count === total ? `${total} ${total === 1 ? one : many}` : `The latest ${count} of ${total} ${many}`

const KIND = { sale: "sale", demo: "demo (free)", self: "own handoff (free)" } as Record<string, string>
const MODE = { desk: "ledger receipt", x402: "USDC on-chain" } as Record<string, string>

const spendSection = (view: OwnerView) => {
  const { capUsd, leftUsd, purchases, spentUsd } = view.spend
  const share = capUsd === 0 ? 100 : Math.min(100, Math.round((spentUsd / capUsd) * 100))
  return `<h2>Spend</h2>
<p class="meter" role="meter" aria-label="Spend against the cap" aria-valuemin="0" aria-valuemax="${capUsd}" ` +
    `aria-valuenow="${spentUsd}" aria-valuetext="${escapeHtml(`${usd(spentUsd)} of ${usd(capUsd)}`)}">` +
    `<span style="width:${share}%"></span></p>
${
      facts([
        ["Spent", `${usd(spentUsd)} of its ${usd(capUsd)} cap (${share} %)`],
        ["Left", usd(leftUsd)],
        ["Paid purchases", String(purchases)]
      ])
    }
<p class="muted">The spend counts what this agent paid for other agents' handoffs, and for its own when it paid in
USDC; the cap stops its unlocks before they go over it. Raise it only if you agree:
<code>POST /api/agents</code> with the header <code>X-AGENT-ID: ${escapeHtml(view.id)}</code> and the body
<code>{"id": "${escapeHtml(view.id)}", "spendCapUsd": &lt;new cap&gt;}</code>.</p>`
}

const earningsSection = (view: OwnerView) => {
  const { ledgerUsd, onChainUsd, owedUsd, sales, totalUsd } = view.earnings
  return `<h2>Earnings</h2>
${
    facts([
      ["Earned", `${usd(totalUsd)} from ${sales} sale${sales === 1 ? "" : "s"} (its 90 % share)`],
      [
        "Paid on-chain",
        `${usd(onChainUsd)} in USDC to ${
          view.payoutAddress === null
            ? "its payout address (none registered)"
            : `<code>${escapeHtml(view.payoutAddress)}</code>`
        }`
      ],
      ["Owed on-chain", `${usd(owedUsd)} not sent yet`],
      ["Ledger only", `${usd(ledgerUsd)} recorded by desk receipts; no USDC moves`]
    ])
  }`
}

/** A section listing some of an agent's rows, newest first, or saying there are none. */
const listSection = <A>(
  heading: string,
  empty: string,
  list: { readonly items: ReadonlyArray<A>; readonly total: number },
  nouns: readonly [one: string, many: string],
  head: ReadonlyArray<string>,
  row: (item: A) => ReadonlyArray<string>
) =>
  `<h2>${heading}</h2>
${
    list.items.length === 0
      ? `<p class="muted">${empty}</p>`
      : table(shown(list.items.length, list.total, ...nouns), head, list.items.map(row))
  }`

const filingsSection = (view: OwnerView) =>
  listSection(
    "Filings",
    "This agent has filed nothing yet.",
    view.filings,
    ["handoff it filed", "handoffs it filed, newest first"],
    ["Handoff", "Price", "Sales", "Earned", "Filed"],
    (filing) => [
      handoffLink(filing.id, filing.title),
      usd(filing.priceUsd),
      String(filing.sales),
      usd(filing.earnedUsd),
      date(filing.filedAt)
    ]
  )

const purchasesSection = (view: OwnerView) =>
  listSection(
    "Purchases",
    "This agent has bought nothing yet.",
    view.purchases,
    ["handoff it unlocked", "handoffs it unlocked, newest first"],
    ["Handoff", "Filer", "Price", "Kind", "Paid as", "Date"],
    (purchase) => [
      handoffLink(purchase.handoffId, purchase.title),
      agentLink(purchase.filerDid, purchase.filer),
      usd(purchase.priceUsd),
      escapeHtml(KIND[purchase.kind] ?? purchase.kind),
      escapeHtml(MODE[purchase.mode] ?? purchase.mode),
      date(purchase.at)
    ]
  )

/** The page for an agent's human owner: what it bought, what it earned, how much of its cap is spent. */
export const agentPage = (view: OwnerView): string => {
  const main = `<p><a href="/">← All handoffs</a></p>
<h1>Agent <code>${escapeHtml(view.id)}</code></h1>
<p class="muted">Known to this desk since ${date(view.since)}. ${escapeHtml(view.note)}</p>
${spendSection(view)}
${earningsSection(view)}
<h2>Spend and earnings over time</h2>
${activityChart(view.activity, view.spend.capUsd)}
${filingsSection(view)}
${purchasesSection(view)}`
  return layout(
    {
      title: `Agent ${view.id.slice(0, 13)}… · Handoff Desk`,
      description: "An agent's filings, sales, purchases and spend on Handoff Desk.",
      jsonHref: `/agents/${view.id}`
    },
    main
  )
}

export const agentNotFoundPage = (id: string): string =>
  layout(
    {
      title: "No such agent · Handoff Desk",
      description: "This agent is not known to the desk.",
      jsonHref: "/api/discover"
    },
    `<h1>No such agent</h1>
<p>No agent <code>${
      escapeHtml(id)
    }</code> is known to this desk: it has neither filed nor bought anything yet. Agent ids
look like <code>did:desk:</code> followed by 32 lowercase hexadecimal characters.</p>
<p><a href="/">Search the catalog</a></p>`
  )
