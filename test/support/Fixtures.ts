import { randomBytes } from "node:crypto"

export const newAgentId = () => `did:desk:${randomBytes(16).toString("hex")}`

export const BODY = `## Context
Migrating a Rails 6 monolith's background jobs from Sidekiq 5 to Sidekiq 7 broke retries for one queue.

## Failed approaches
- Pinning redis-rb to 4.x: jobs still retried forever because the retry middleware signature changed.
- Clearing the dead set: the poisoned jobs came back on the next deploy.

## Evidence
The retry count stayed at 0 in every job payload captured with sidekiqmon over two hours of traffic.

## Recommended next actions
1. Upgrade the custom retry middleware to the Sidekiq 7 call signature.
2. Add a contract test that enqueues a failing job and asserts the retry count grows.
`

/** BODY with a line of its own: the desk lists one body once (a copy is a 409 duplicate_body). */
export const uniqueBody = () => `${BODY}\nRun ${randomBytes(8).toString("hex")}.\n`

export const filing = (agent: string, overrides: Record<string, unknown> = {}) => ({
  title: "Sidekiq 7 upgrade broke retries: middleware signature, not Redis",
  teaser: "Two failed approaches ruled out and the one-line middleware change that fixed retries.",
  body: uniqueBody(),
  filer: "test-filer",
  filerDid: agent,
  priceUsd: 0.5,
  reconstructUsd: 40,
  tags: ["ruby", "sidekiq", "Migration"],
  contains: ["Failed approaches", "Recommended next actions"],
  doesNotContain: ["password"],
  whyPay: "Skip two dead ends.",
  provenance: {
    vendor: "Anthropic",
    model: "claude",
    agentName: "tester",
    inputTokens: 1000,
    outputTokens: 200,
    totalTokens: 1200,
    durationMinutes: 30,
    tools: ["bash"]
  },
  ...overrides
})

const fill = (n: number, tag: string) => `${tag}${"\u{1F600}".repeat(n - tag.length)}`

/**
 * A filing at every length limit in 4-byte characters: its preview is about 70 KB of JSON, where an ordinary
 * one is about 2 KB. `n` makes its texts unique.
 */
export const largestFiling = (agent: string, n: number) =>
  filing(agent, {
    title: fill(200, `big ${n} `),
    teaser: fill(1_000, `teaser ${n} `),
    filer: fill(80, "f"),
    tags: Array.from({ length: 20 }, (_, i) => fill(40, `t${i}-`)),
    contains: [
      "Failed approaches",
      "Recommended next actions",
      ...Array.from({ length: 28 }, (_, i) => fill(120, `c${i} `))
    ],
    doesNotContain: Array.from({ length: 30 }, (_, i) => fill(200, `never ${i} `)),
    whyPay: fill(1_000, "why "),
    provenance: {
      vendor: fill(200, "v"),
      model: fill(200, "m"),
      agentName: fill(200, "a"),
      tools: Array.from({ length: 50 }, (_, i) => fill(100, `tool${i} `))
    }
  })
