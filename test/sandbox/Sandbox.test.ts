import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

interface Step {
  readonly method: string
  readonly url: string
  readonly pay: boolean
  readonly headers?: Record<string, string>
  readonly body?: Record<string, string>
}

/** Sends a step exactly as written: its method to its url (resolved against the desk), its headers, its body as JSON. */
const follow = (base: string, step: Step) =>
  fetch(new URL(step.url, base), {
    method: step.method,
    ...(step.headers === undefined ? {} : { headers: step.headers }),
    ...(step.body === undefined ? {} : { body: JSON.stringify(step.body) })
  })

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`the sandbox over ${backend.name}`, () => {
    // Payment required is the hard case: the sandbox must stay free while every other unlock asks for X-PAYMENT.
    it.layer(deskOn(backend.layer, undefined, { config: { paymentRequired: true } }), { timeout: 120_000 })((it) => {
      it.effect("following the steps literally ends with the body in hand and a demo receipt", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const sandbox = yield* Effect.promise(() => desk.request("/api/sandbox").then(readJson))
          expect(sandbox).toMatchObject({ free: true, usdcRequired: false, stage: "mainnet" })
          expect(sandbox.spendControl).toMatchObject({ header: "X-AGENT-ID", defaultCapUsd: 10 })
          expect(sandbox.steps.map((_: Step) => _.url.split("?")[0])).toEqual([
            "/api/status",
            "/api/example",
            "/api/discover",
            `/api/handoffs/${sandbox.handoffId}/unlock`,
            `/api/handoffs/${sandbox.handoffId}/body`
          ])
          expect(sandbox.steps.every((_: Step) => _.pay === false)).toBe(true)

          // eslint-disable-next-line @typescript-eslint/no-explicit-any
          const answers: Array<{ status: number; json: any }> = []
          for (const step of sandbox.steps as ReadonlyArray<Step>) {
            const response = yield* Effect.promise(() => follow(desk.url, step))
            answers.push({ status: response.status, json: yield* Effect.promise(() => readJson(response)) })
          }
          expect(answers.map((_) => _.status)).toEqual([200, 200, 200, 200, 200])
          const [status, example, discover, unlock, body] = answers.map((_) => _.json)
          expect(status.required).toBe(true)
          expect(example.free).toBe(true)
          expect(discover.items.map((_: { id: string }) => _.id)).toContain(sandbox.handoffId)
          expect(unlock.receipt).toMatchObject({
            handoffId: sandbox.handoffId,
            payer: sandbox.agentId,
            kind: "demo",
            mode: "desk"
          })
          expect(body.body).toContain("## Failed approaches")

          const receipts = yield* Effect.promise(() =>
            desk.request(`/api/receipts?payer=${sandbox.agentId}`).then(readJson)
          )
          expect(receipts.receipts.map((_: { kind: string; handoffId: string }) => [_.kind, _.handoffId])).toEqual([
            ["demo", sandbox.handoffId]
          ])
        }))

      // An outside check read "0.01 USD; confirm with your owner before paying" in the demo packet's 402, on a desk
      // whose sandbox says it is free and whose challenge accepts no payment for it.
      it.effect("the demo packet's body read before its unlock: a 402 that says the unlock is free", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const sandbox = yield* Effect.promise(() => desk.request("/api/sandbox").then(readJson))
          const reader = newAgentId()
          const response = yield* Effect.promise(() =>
            desk.request(`/api/handoffs/${sandbox.handoffId}/body`, { agent: reader })
          )
          expect(response.status).toBe(402)
          const refused = yield* Effect.promise(() => readJson(response))
          expect(refused).toMatchObject({ error: "payment_required", accepts: [] })
          expect(refused.message).toContain(`POST /api/handoffs/${sandbox.handoffId}/unlock`)
          expect(refused.message).toContain("free")
          expect(refused.message).not.toMatch(/[0-9] USD|before paying/)
        }))

      it.effect("each run gets a fresh identity; a real handoff still needs X-PAYMENT", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const [first, second] = yield* Effect.promise(() =>
            Promise.all([desk.request("/api/sandbox").then(readJson), desk.request("/api/sandbox").then(readJson)])
          )
          expect(first.agentId).toMatch(/^did:desk:[0-9a-f]{32}$/)
          expect(first.agentId).not.toBe(second.agentId)
          const filer = newAgentId()
          const filed = yield* Effect.promise(() =>
            desk.request("/api/handoffs", { json: filing(filer), agent: filer }).then(readJson)
          )
          const buyer = newAgentId()
          const refused = yield* Effect.promise(() =>
            desk.request(`/api/handoffs/${filed.id}/unlock`, { json: { payer: buyer }, agent: buyer })
          )
          expect(refused.status).toBe(402)
          // The desk's self-description says so too, not that an unlock without X-PAYMENT writes a desk receipt.
          const surface = yield* Effect.promise(() => desk.request("/api/surface").then(readJson))
          expect(surface.settlement.websitePay).toContain("402")
          // A desk without a chain sends no USDC to filers, and says so (it spoke of payouts after X-PAYMENT).
          expect(surface.settlement.filerPayout).toBe(
            "90 % of each sale is recorded to the filer on the ledger; no USDC is sent on this desk"
          )
        }))
    })
  })
}
