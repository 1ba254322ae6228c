import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const send = (path: string, init: RequestInit & { json?: unknown; agent?: string } = {}) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await desk.request(path, init)
      return { status: response.status, headers: response.headers, json: await readJson(response) }
    }))

const cachingOf = (answer: { readonly headers: Headers }) => ({
  cacheControl: answer.headers.get("cache-control"),
  vary: answer.headers.get("vary")
})
const PRIVATE = { cacheControl: "private, no-store", vary: "X-AGENT-ID, SIGN-IN-WITH-X" }

/**
 * An answer that depends on who asks (X-AGENT-ID, SIGN-IN-WITH-X) rather than on its URL alone must not be kept by
 * a shared cache in front of the desk: it would hand a sealed body, a buyer's receipt or a fresh identity to the
 * next client asking for the same URL (an attack review found all three answered with no Cache-Control).
 */
for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`answers for one caller over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("a body, an unlock, a receipt and a sandbox identity are answered private, not to be stored", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          const buyer = newAgentId()
          const filed = yield* send("/api/handoffs", { json: filing(filer), agent: filer })
          expect(filed.status).toBe(201)
          const id = filed.json.id as string

          const sealed = yield* send(`/api/handoffs/${id}/body`, { agent: newAgentId() })
          expect(sealed.status).toBe(402)
          expect(cachingOf(sealed).cacheControl).toContain("no-store")

          const unlocked = yield* send(`/api/handoffs/${id}/unlock`, { json: { payer: buyer }, agent: buyer })
          expect(unlocked.status).toBe(200)
          const read = yield* send(`/api/handoffs/${id}/body`, { agent: buyer })
          expect(read.status).toBe(200)
          const receipt = yield* send(`/api/receipts/${unlocked.json.receipt.receiptId}`, { agent: buyer })
          expect(receipt.status).toBe(200)
          const sandbox = yield* send("/api/sandbox")
          expect(sandbox.json.agentId).toMatch(/^did:desk:[0-9a-f]{32}$/)
          expect({
            unlock: cachingOf(unlocked),
            body: cachingOf(read),
            receipt: cachingOf(receipt),
            sandbox: cachingOf(sandbox)
          }).toEqual({ unlock: PRIVATE, body: PRIVATE, receipt: PRIVATE, sandbox: PRIVATE })

          // The same receipt asked for by another id is a 404 that is not kept either.
          const other = yield* send(`/api/receipts/${unlocked.json.receipt.receiptId}`, { agent: newAgentId() })
          expect(other.status).toBe(404)
          expect(cachingOf(other)).toEqual(PRIVATE)
          // A preview is the same for everyone: nothing private about it.
          const preview = yield* send(`/api/handoffs/${id}`)
          expect(preview.status).toBe(200)
          expect(cachingOf(preview).cacheControl ?? "").not.toContain("private")
        }))
    })
  })
}
