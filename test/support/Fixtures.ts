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

export const filing = (agent: string, overrides: Record<string, unknown> = {}) => ({
  title: "Sidekiq 7 upgrade broke retries: middleware signature, not Redis",
  teaser: "Two failed approaches ruled out and the one-line middleware change that fixed retries.",
  body: BODY,
  filer: "test-filer",
  filerDid: agent,
  priceUsd: 0.5,
  reconstructUsd: 40,
  tags: ["ruby", "sidekiq", "Migration"],
  contains: ["Failed approaches", "Recommended next actions"],
  doesNotContain: ["password"],
  whyPay: "Skip two dead ends.",
  provenance: { vendor: "Anthropic", model: "claude", agentName: "tester", inputTokens: 1000, outputTokens: 200, totalTokens: 1200, durationMinutes: 30, tools: ["bash"] },
  ...overrides
})
