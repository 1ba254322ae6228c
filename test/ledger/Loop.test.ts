import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { privateKeyToAccount } from "viem/accounts"
import { payoutChangeMessage } from "../../src/Domain/Agent.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { BODY, filing, newAgentId } from "../support/Fixtures.ts"
import { connectMcp } from "../support/McpClient.ts"
import { backends } from "../support/Storage.ts"

const send = (path: string, init?: Parameters<TestDesk["Type"]["request"]>[1]) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await desk.request(path, init)
      return { status: response.status, headers: response.headers, json: await readJson(response) }
    }))

const fileOne = (filer: string, overrides: Record<string, unknown> = {}) =>
  Effect.map(send("/api/handoffs", { json: filing(filer, overrides), agent: filer }), (_) => _.json.id as string)

const unlock = (id: string, buyer: string) =>
  send(`/api/handoffs/${id}/unlock`, { json: { payer: buyer }, agent: buyer })

const payoutKey = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d")
const otherKey = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a")

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`the spec's loop over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("file, discover, 402, unlock, body, receipts, earnings, books", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          const buyer = newAgentId()
          const id = yield* fileOne(filer, {
            priceUsd: 0.25,
            title: "Zanzibar ledger reconciliation method",
            body: BODY
          })

          const found = yield* send("/api/discover?q=zanzibar")
          expect(found.json.items.map((_: { id: string }) => _.id)).toContain(id)

          const sealed = yield* send(`/api/handoffs/${id}/body`, { agent: buyer })
          expect(sealed.status).toBe(402)
          expect(sealed.json).toMatchObject({ ok: false, error: "payment_required", x402Version: 1, accepts: [] })
          expect((yield* send(`/api/handoffs/${id}/body`)).status).toBe(402)

          const first = yield* unlock(id, buyer)
          expect(first.status).toBe(200)
          expect(first.json).toMatchObject({ ok: true, alreadyUnlocked: false, bodyUrl: `/api/handoffs/${id}/body` })
          expect(first.json.receipt).toMatchObject({
            handoffId: id,
            payer: buyer,
            filerDid: filer,
            priceUsd: 0.25,
            filerPayoutUsd: 0.225,
            deskFeeUsd: 0.025,
            mode: "desk",
            kind: "sale",
            // A desk receipt moves no USDC: the filer's share is recorded in the ledger, never paid on-chain.
            filerPayoutStatus: "ledger",
            network: "base",
            txUrl: null,
            filerPayoutTxUrl: null
          })
          expect(first.json.receipt.receiptId).toMatch(/^rcpt_/)
          // Links to the pages for people: the handoff, its filer, and the buyer's own page (its owner's view).
          expect(first.json.receipt.urls).toEqual({
            handoff: `/h/${id}`,
            filer: `/agents/${filer}`,
            payer: `/agents/${buyer}`
          })

          const again = yield* unlock(id, buyer)
          expect(again.json.alreadyUnlocked).toBe(true)
          expect(again.json.receipt.receiptId).toBe(first.json.receipt.receiptId)

          const body = yield* send(`/api/handoffs/${id}/body`, { agent: buyer })
          expect(body.status).toBe(200)
          expect(body.json).toEqual({
            ok: true,
            id,
            title: "Zanzibar ledger reconciliation method",
            hash: createHash("sha256").update(BODY).digest("hex"),
            body: BODY
          })
          expect((yield* send(`/api/handoffs/${id}/body`, { agent: buyer })).status).toBe(200)
          expect((yield* send(`/api/handoffs/${id}`)).json.purchases).toBe(1)

          const mine = yield* send(`/api/receipts?payer=${buyer}`)
          expect(mine.json).toMatchObject({ ok: true, total: 1, page: 1, pages: 1 })
          expect(mine.json.receipts[0].payer).toBe(buyer)
          const sold = yield* send(`/api/receipts?filer=${filer}`)
          expect(sold.json.receipts[0].payer).not.toBe(buyer)
          // A masked payer has no page link: it would name the id the mask hides.
          expect(sold.json.receipts[0].urls).toEqual({ handoff: `/h/${id}`, filer: `/agents/${filer}`, payer: null })
          expect(JSON.stringify(sold.json)).not.toContain(buyer)

          const earnings = yield* send("/api/earnings")
          expect(earnings.json).toMatchObject({ ok: true, filerSharePct: 90, deskFeePct: 10 })
          expect(earnings.json.deskLedgerOnlyUsd).toBeGreaterThanOrEqual(0.25)
          expect(earnings.json.filerLedgerUsd).toBeGreaterThanOrEqual(0.225)
          // Nothing on this ledger-only desk will ever be paid on-chain, so nothing is owed.
          expect(earnings.json.filerOwedUsd).toBe(0)
          expect(JSON.stringify(earnings.json)).not.toContain(buyer)
          const books = yield* send("/api/books")
          expect(books.json).toMatchObject({ ok: true, balanced: true, filerOwedUsd: 0 })
          expect(books.json.filerLedgerUsd).toBe(earnings.json.filerLedgerUsd)
          expect(JSON.stringify(books.json)).not.toContain(buyer)

          const filerView = yield* send(`/api/agents/${filer}`)
          expect(filerView.json).toMatchObject({ ok: true, id: filer, earnedUsd: 0.225, earnedUsdOnChain: 0, sales: 1 })
          const buyerView = yield* send(`/api/agents/${buyer}`)
          expect(buyerView.json).toMatchObject({ spendCapUsd: 10, spentUsd: 0.25, purchases: 1 })
        }))

      it.effect("payer must equal the header; unknown handoffs are 404", () =>
        Effect.gen(function*() {
          const buyer = newAgentId()
          const id = yield* fileOne(newAgentId())
          const mismatch = yield* send(`/api/handoffs/${id}/unlock`, { json: { payer: newAgentId() }, agent: buyer })
          expect(mismatch.status).toBe(422)
          expect(mismatch.json.issues[0].path).toBe("payer")
          expect((yield* send("/api/handoffs/DESK-99999999/unlock", { json: { payer: buyer }, agent: buyer })).status)
            .toBe(404)
          expect((yield* send(`/api/handoffs/${id}/unlock`, { json: { payer: buyer } })).status).toBe(401)
          expect((yield* send(`/api/receipts?payer=${buyer}`)).json.total).toBe(0)
        }))

      it.effect("refuses an unlock over the spend cap, writes nothing, and lets the owner raise it", () =>
        Effect.gen(function*() {
          const buyer = newAgentId()
          const pricey = yield* fileOne(newAgentId(), { priceUsd: 7, reconstructUsd: 700 })
          const second = yield* fileOne(newAgentId(), { priceUsd: 4, reconstructUsd: 400 })
          expect((yield* unlock(pricey, buyer)).status).toBe(200)
          const refused = yield* unlock(second, buyer)
          expect(refused.status).toBe(403)
          expect(refused.json).toMatchObject({ ok: false, error: "spend_cap_exceeded", spendCapUsd: 10, spentUsd: 7 })
          // The hint names all a raise needs: the route, the header and the body.
          expect(refused.json.message).toContain(
            `POST /api/agents, header X-AGENT-ID: ${buyer}, body {"id": "${buyer}", "spendCapUsd": <new cap>}`
          )
          expect((yield* send(`/api/receipts?payer=${buyer}`)).json.total).toBe(1)
          expect((yield* send(`/api/handoffs/${second}`)).json.purchases).toBe(0)

          const raised = yield* send("/api/agents", { json: { id: buyer, spendCapUsd: 20 }, agent: buyer })
          expect(raised.json).toMatchObject({ ok: true, spendCapUsd: 20, spentUsd: 7 })
          expect((yield* unlock(second, buyer)).status).toBe(200)
          const lowered = yield* send("/api/agents", { json: { id: buyer, spendCapUsd: 5 }, agent: buyer })
          expect(lowered.status).toBe(422)
        }))

      it.effect("a new payer refused for the spend cap is left unregistered; a known one keeps its row and settings", () =>
        Effect.gen(function*() {
          const [stranger, known] = [newAgentId(), newAgentId()]
          const pricey = yield* fileOne(newAgentId(), { priceUsd: 11, reconstructUsd: 1100 })
          const refused = yield* unlock(pricey, stranger)
          expect(refused.json).toMatchObject({ ok: false, error: "spend_cap_exceeded", spendCapUsd: 10, spentUsd: 0 })
          expect((yield* send(`/api/agents/${stranger}`)).status).toBe(404)
          // Refused again, then raised and bought: the row comes with the raise, and the refusals left no trace.
          expect((yield* unlock(pricey, stranger)).status).toBe(403)
          expect((yield* send("/api/agents", { json: { id: stranger, spendCapUsd: 12 }, agent: stranger })).status)
            .toBe(200)
          expect((yield* unlock(pricey, stranger)).status).toBe(200)
          expect((yield* send(`/api/agents/${stranger}`)).json).toMatchObject({ spendCapUsd: 12, spentUsd: 11 })

          const payout = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
          yield* send("/api/agents", { json: { id: known, spendCapUsd: 10.5, payoutAddress: payout }, agent: known })
          expect((yield* unlock(pricey, known)).status).toBe(403)
          expect((yield* send(`/api/agents/${known}`)).json).toMatchObject({ spendCapUsd: 10.5, payoutAddress: payout })
        }))

      it.effect("feedback: only buyers vote, once each, and a later vote replaces the first", () =>
        Effect.gen(function*() {
          const buyer = newAgentId()
          const id = yield* fileOne(newAgentId())
          const early = yield* send(`/api/handoffs/${id}/feedback`, { json: { useful: true }, agent: buyer })
          expect(early.status).toBe(403)
          expect(early.json.error).toBe("not_unlocked")
          yield* unlock(id, buyer)
          yield* send(`/api/handoffs/${id}/feedback`, { json: { useful: true }, agent: buyer })
          const changed = yield* send(`/api/handoffs/${id}/feedback`, { json: { useful: false }, agent: buyer })
          expect(changed.json).toMatchObject({ ok: true, useful: 0, notUseful: 1, yourVote: false })
          expect((yield* send(`/api/handoffs/${id}`)).json).toMatchObject({ useful: 0, notUseful: 1 })
        }))

      it.effect("only buyers vote: a filer's own unlock and the demo packet's are refused; only a buyer's useful vote clears the extreme-ratio flag", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          // Claimed worth 1000 times its price: flagged until a buyer finds it useful.
          const id = yield* fileOne(filer, { priceUsd: 0.05, reconstructUsd: 50 })
          const flags = () => Effect.map(send(`/api/handoffs/${id}`), (_) => _.json.qualityFlags as Array<string>)
          expect(yield* flags()).toEqual(["unproven_extreme_ratio"])

          const own = yield* unlock(id, filer)
          expect(own.json.receipt).toMatchObject({
            kind: "self",
            filerPayoutUsd: 0,
            deskFeeUsd: 0.05,
            filerPayoutStatus: "zero"
          })
          const selfVote = yield* send(`/api/handoffs/${id}/feedback`, { json: { useful: true }, agent: filer })
          expect(selfVote.status).toBe(403)
          expect(selfVote.json.error).toBe("not_unlocked")
          expect((yield* send(`/api/handoffs/${id}`)).json).toMatchObject({
            useful: 0,
            qualityFlags: ["unproven_extreme_ratio"]
          })

          const demoId = (yield* send("/api/sandbox")).json.handoffId as string
          const tourist = newAgentId()
          const demo = yield* unlock(demoId, tourist)
          expect(demo.json.receipt).toMatchObject({ kind: "demo", filerPayoutUsd: 0, filerPayoutStatus: "zero" })
          expect((yield* send(`/api/handoffs/${demoId}/feedback`, { json: { useful: true }, agent: tourist })).status)
            .toBe(403)

          const buyer = newAgentId()
          yield* unlock(id, buyer)
          const critic = yield* send(`/api/handoffs/${id}/feedback`, { json: { useful: false }, agent: buyer })
          expect(critic.json).toMatchObject({ ok: true, useful: 0, notUseful: 1 })
          expect(yield* flags()).toEqual(["unproven_extreme_ratio"])
          expect((yield* send(`/api/handoffs/${id}/feedback`, { json: { useful: true }, agent: buyer })).json)
            .toMatchObject({ useful: 1, notUseful: 0 })
          expect(yield* flags()).toEqual([])
        }))

      it.effect("payout address: first registration is free, a change needs the current address's signature", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          const first = yield* send("/api/agents", {
            json: { id: filer, payoutAddress: payoutKey.address },
            agent: filer
          })
          expect(first.json.payoutAddress).toBe(payoutKey.address)
          const hijack = yield* send("/api/agents", {
            json: { id: filer, payoutAddress: otherKey.address },
            agent: filer
          })
          expect(hijack.status).toBe(403)
          expect(hijack.json.error).toBe("payout_change_requires_signature")
          const signedAt = new Date().toISOString()
          const forged = yield* Effect.promise(() =>
            otherKey.signMessage({ message: payoutChangeMessage(filer, otherKey.address, signedAt) })
          )
          const refused = yield* send("/api/agents", {
            json: { id: filer, payoutAddress: otherKey.address, payoutSignature: forged, payoutSignedAt: signedAt },
            agent: filer
          })
          expect(refused.status).toBe(403)
          const signature = yield* Effect.promise(() =>
            payoutKey.signMessage({ message: payoutChangeMessage(filer, otherKey.address, signedAt) })
          )
          const changed = yield* send("/api/agents", {
            json: { id: filer, payoutAddress: otherKey.address, payoutSignature: signature, payoutSignedAt: signedAt },
            agent: filer
          })
          expect(changed.status).toBe(200)
          expect(changed.json.payoutAddress).toBe(otherKey.address)
          const bad = yield* send("/api/agents", { json: { id: filer, payoutAddress: "0xAbC" }, agent: filer })
          expect(bad.status).toBe(422)
        }))

      it.effect("a payout-change signature is used once: replayed after A -> B -> A, it is refused", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          yield* send("/api/agents", { json: { id: filer, payoutAddress: payoutKey.address }, agent: filer })
          const change = (key: typeof payoutKey, to: string, signedAt: string) =>
            Effect.gen(function*() {
              const payoutSignature = yield* Effect.promise(() =>
                key.signMessage({ message: payoutChangeMessage(filer, to, signedAt) })
              )
              return { id: filer, payoutAddress: to, payoutSignature, payoutSignedAt: signedAt }
            })
          const now = Date.now()
          const toOther = yield* change(payoutKey, otherKey.address, new Date(now - 2_000).toISOString())
          expect((yield* send("/api/agents", { json: toOther, agent: filer })).status).toBe(200)
          const back = yield* change(otherKey, payoutKey.address, new Date(now - 1_000).toISOString())
          expect((yield* send("/api/agents", { json: back, agent: filer })).status).toBe(200)
          // Whoever saw the first change's request sends it again: the owner went back on purpose.
          const replay = yield* send("/api/agents", { json: toOther, agent: filer })
          expect({ status: replay.status, error: replay.json.error }).toEqual({
            status: 403,
            error: "payout_change_requires_signature"
          })
          expect((yield* send(`/api/agents/${filer}`)).json.payoutAddress).toBe(payoutKey.address)
          // A signature older than the last change is refused even when it was never used.
          const stale = yield* change(payoutKey, otherKey.address, new Date(now - 1_500).toISOString())
          expect((yield* send("/api/agents", { json: stale, agent: filer })).status).toBe(403)
          const fresh = yield* change(payoutKey, otherKey.address, new Date(now).toISOString())
          expect((yield* send("/api/agents", { json: fresh, agent: filer })).json.payoutAddress).toBe(otherKey.address)
        }))

      it.effect("an agent changes only its own settings: X-AGENT-ID must be the id", () =>
        Effect.gen(function*() {
          const victim = newAgentId()
          const attacker = newAgentId()
          yield* fileOne(victim)
          const attempts = [
            { agent: undefined, status: 401, error: "agent_id_required" },
            { agent: "did:desk:NOT-AN-ID", status: 400, error: "invalid_agent_id" },
            { agent: attacker, status: 403, error: "agent_mismatch" }
          ]
          for (
            const body of [{ id: victim, spendCapUsd: 5000 }, { id: victim, spendCapUsd: 0 }, {
              id: victim,
              payoutAddress: otherKey.address
            }]
          ) {
            for (const { agent, error, status } of attempts) {
              const refused = yield* send("/api/agents", agent === undefined ? { json: body } : { json: body, agent })
              expect({ body, agent, status: refused.status, error: refused.json.error }).toEqual({
                body,
                agent,
                status,
                error
              })
            }
          }
          expect((yield* send(`/api/agents/${victim}`)).json).toMatchObject({ spendCapUsd: 10, payoutAddress: null })
          // A first registration is a change too: nobody registers an id on another's behalf.
          const unknown = newAgentId()
          expect((yield* send("/api/agents", { json: { id: unknown, spendCapUsd: 1 }, agent: attacker })).status).toBe(
            403
          )
          expect((yield* send(`/api/agents/${unknown}`)).status).toBe(404)
          const own = yield* send("/api/agents", { json: { id: unknown, spendCapUsd: 1 }, agent: unknown })
          expect(own.json).toMatchObject({ ok: true, id: unknown, spendCapUsd: 1 })
        }))

      it.effect("requireSignIn is refused on a desk without a chain: no wallet could sign in, the id would never read again", () =>
        Effect.gen(function*() {
          const buyer = newAgentId()
          const refused = yield* send("/api/agents", { json: { id: buyer, requireSignIn: true }, agent: buyer })
          expect(refused.status).toBe(422)
          expect(refused.json).toMatchObject({ error: "invalid_request", issues: [{ path: "requireSignIn" }] })
          expect((yield* send(`/api/agents/${buyer}`)).status).toBe(404)
          // Nothing else of the request is written either.
          const both = yield* send("/api/agents", {
            json: { id: buyer, spendCapUsd: 3, requireSignIn: true },
            agent: buyer
          })
          expect(both.status).toBe(422)
          expect((yield* send(`/api/agents/${buyer}`)).status).toBe(404)
        }))

      it.effect("a payout address must be able to receive: not the zero address nor the token contract", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          // The desk-receipt rail on base names base's USDC as its asset.
          const unusable = ["0x0000000000000000000000000000000000000000", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"]
          for (const payoutAddress of unusable) {
            const registered = yield* send("/api/agents", { json: { id: filer, payoutAddress }, agent: filer })
            expect(registered.status).toBe(422)
            expect(registered.json).toMatchObject({ error: "invalid_request", issues: [{ path: "payoutAddress" }] })
            const filed = yield* send("/api/handoffs", { json: filing(filer, { payoutAddress }), agent: filer })
            expect(filed.status).toBe(422)
            expect(filed.json.error).toBe("invalid_handoff")
            expect(filed.json.issues.map((_: { path: string }) => _.path)).toEqual(["payoutAddress"])
          }
          expect((yield* send(`/api/agents/${filer}`)).status).toBe(404)
          expect((yield* send(`/api/receipts?filer=${filer}`)).json.total).toBe(0)
        }))

      it.scoped("an unusable payout address is named beside the request's other problems, in one 422", () =>
        Effect.gen(function*() {
          // Its rule depends on the rail, so no schema judges it: a request its schema refused heard of it next try.
          const filer = newAgentId()
          const payoutAddress = "0x0000000000000000000000000000000000000000"
          const paths = (json: { issues: ReadonlyArray<{ path: string }> }) => json.issues.map((_) => _.path).sort()
          const registered = yield* send("/api/agents", {
            json: { id: filer, spendCapUsd: 1.1234567, payoutAddress },
            agent: filer
          })
          expect(registered.status).toBe(422)
          expect(registered.json.error).toBe("invalid_request")
          expect(paths(registered.json)).toEqual(["payoutAddress", "spendCapUsd"])
          const filed = yield* send("/api/handoffs", {
            json: filing(filer, { payoutAddress, priceUsd: 0.1234567 }),
            agent: filer
          })
          expect(filed.status).toBe(422)
          expect(filed.json.error).toBe("invalid_handoff")
          expect(paths(filed.json)).toEqual(["payoutAddress", "priceUsd"])
          // A malformed address is the schema's own issue, named once.
          const malformed = yield* send("/api/agents", {
            json: { id: filer, spendCapUsd: 1.1234567, payoutAddress: "0xabc" },
            agent: filer
          })
          expect(paths(malformed.json)).toEqual(["payoutAddress", "spendCapUsd"])
          const client = yield* connectMcp({ "X-AGENT-ID": filer })
          const viaMcp = yield* Effect.promise(() =>
            client.callTool({ name: "file_handoff", arguments: filing(filer, { payoutAddress, priceUsd: 0.1234567 }) })
          )
          expect(viaMcp.isError).toBe(true)
          expect(paths(JSON.parse((viaMcp.content as Array<{ text: string }>)[0]!.text))).toEqual([
            "payoutAddress",
            "priceUsd"
          ])
          expect((yield* send(`/api/agents/${filer}`)).status).toBe(404)
        }))

      it.effect("a filer names its payout address in its first filing", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          yield* fileOne(filer, { payoutAddress: payoutKey.address })
          expect((yield* send(`/api/agents/${filer}`)).json.payoutAddress).toBe(payoutKey.address)
          const other = yield* send("/api/handoffs", {
            json: filing(filer, { payoutAddress: otherKey.address }),
            agent: filer
          })
          expect(other.status).toBe(403)
        }))
    })
  })
}
