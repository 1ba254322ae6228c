import { describe, expect, layer } from "@effect/vitest"
import { PaymentRequiredV1Schema, PaymentRequiredV2Schema } from "@x402/core/schemas"
import { NETWORKS } from "@x402/evm/v1"
import {
  extractDiscoveryInfo,
  extractDiscoveryInfoV1,
  isDiscoverableV1,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec
} from "@x402/extensions/bazaar"
import { Effect } from "effect"
import { isAddress } from "viem"
import { Payouts } from "../../src/Payouts.ts"
import { PUBLIC_URL, readJson, TestDesk } from "../support/Desk.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import { expectAuditPasses } from "./support/Audit.ts"
import {
  decodeHeader,
  eventually,
  EXPLORER,
  fileHandoff,
  freshPayee,
  receiptsOf,
  send,
  TestChain,
  unlockWith,
  v1Buyer,
  v2Buyer,
  x402DeskOn
} from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"

const PRICE = 250_000n

/** The legacy v1 client's own zod schema is strict where @x402/core 2.x is lenient; these are its rules. */
const expectStrictV1 = (requirement: Record<string, unknown>) => {
  expect(new URL(requirement["resource"] as string).protocol).toMatch(/^https?:$/)
  expect(typeof requirement["mimeType"]).toBe("string")
  // `outputSchema: z.record(z.any()).optional()`: absent, or an object (never null).
  if ("outputSchema" in requirement) expect(requirement["outputSchema"]).toEqual(expect.any(Object))
  expect(NETWORKS).toContain(requirement["network"])
  expect(requirement["maxAmountRequired"]).toMatch(/^\d+$/)
  expect(isAddress(requirement["payTo"] as string)).toBe(true)
  expect(isAddress(requirement["asset"] as string)).toBe(true)
}

const buy = (pay: typeof fetch, url: string, id: string, buyer: string) =>
  Effect.promise(async () => {
    const response = await pay(`${url}/api/handoffs/${id}/unlock`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", "x-agent-id": buyer },
      body: JSON.stringify({ payer: buyer })
    })
    return { status: response.status, headers: response.headers, json: await readJson(response) }
  })

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`x402 purchases over ${backend.name}`, () => {
    // The standalone `layer`: `it.layer` mutates the shared `it`, so a second suite in the file would be wired
    // to a rebuild of the first suite's layer. Live clock: the desk's timeouts and the worker's sleeps are real.
    layer(x402DeskOn(backend.layer), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("status reports the rail: network, asset, domain, payTo, local facilitator reachable", () =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          const status = yield* send("/api/status")
          expect(status.json).toMatchObject({
            ok: true,
            network: "base-sepolia",
            stage: "testnet",
            asset: "USDC",
            assetAddress: chain.tokenAddress,
            eip712: { name: "USDC", version: "2" },
            payTo: chain.accounts.desk.address,
            x402Ready: true,
            required: true,
            deskFallback: false,
            facilitatorKind: "local",
            facilitatorReachable: true,
            payout: { enabled: true }
          })
          yield* expectAuditPasses
        }))

      it.effect("the 402 on body and unlock is a valid v1 body and the same v2 challenge in PAYMENT-REQUIRED", () =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          const { id } = yield* fileHandoff(0.25)
          const buyer = newAgentId()
          for (
            const answer of [yield* send(`/api/handoffs/${id}/body`, { agent: buyer }), yield* unlockWith(id, buyer)]
          ) {
            expect(answer.status).toBe(402)
            expect(answer.json).toMatchObject({ ok: false, error: "payment_required", x402Version: 1 })
            expect(PaymentRequiredV1Schema.safeParse(answer.json).success).toBe(true)
            const [v1] = answer.json.accepts
            expectStrictV1(v1)
            expect(v1).toEqual({
              scheme: "exact",
              network: "base-sepolia",
              maxAmountRequired: String(PRICE),
              resource: `${PUBLIC_URL}/api/handoffs/${id}/unlock`,
              description: expect.stringContaining(id),
              mimeType: "application/json",
              payTo: chain.accounts.desk.address,
              maxTimeoutSeconds: 300,
              asset: chain.tokenAddress,
              extra: { name: "USDC", version: "2" },
              outputSchema: expect.objectContaining({ input: expect.objectContaining({ method: "POST" }) })
            })
            const v2 = decodeHeader(answer.headers.get("payment-required"))
            expect(PaymentRequiredV2Schema.safeParse(v2).success).toBe(true)
            expect(v2).toMatchObject({
              x402Version: 2,
              resource: { url: v1.resource, mimeType: "application/json" },
              accepts: [{
                scheme: "exact",
                network: "eip155:84532",
                amount: String(PRICE),
                asset: chain.tokenAddress,
                payTo: chain.accounts.desk.address,
                maxTimeoutSeconds: 300,
                extra: { name: "USDC", version: "2" }
              }]
            })
            expect(answer.headers.get("cache-control")).toBe("no-store")
          }
          expect(yield* receiptsOf(buyer)).toEqual([])
          yield* expectAuditPasses
        }))

      it.effect("every challenge declares the unlock for Bazaar catalogs, v1 and v2, as x402's own helpers read it", () =>
        Effect.gen(function*() {
          const { id } = yield* fileHandoff(0.25)
          const buyer = newAgentId()
          const { teaser, title } = (yield* send(`/api/handoffs/${id}`)).json
          expect(title.length * teaser.length).toBeGreaterThan(0)
          for (
            const answer of [yield* send(`/api/handoffs/${id}/body`, { agent: buyer }), yield* unlockWith(id, buyer)]
          ) {
            const [v1] = answer.json.accepts
            expect(isDiscoverableV1(v1)).toBe(true)
            expect(extractDiscoveryInfoV1(v1)).toMatchObject({
              input: { type: "http", method: "POST", bodyType: "json", headers: { "X-AGENT-ID": expect.any(String) } },
              output: { type: "json", example: { ok: true, bodyUrl: "/api/handoffs/DESK-1/body" } }
            })
            const fromV1 = extractDiscoveryInfo({ x402Version: 1 } as never, v1)
            expect(fromV1).toMatchObject({ resourceUrl: v1.resource, method: "POST", x402Version: 1 })
            expect(fromV1?.description).toContain(title)
            expect(fromV1?.description).toContain(teaser)

            const v2 = decodeHeader(answer.headers.get("payment-required"))
            const bazaar = v2.extensions.bazaar
            expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true })
            expect(validateDiscoveryExtensionSpec(bazaar)).toMatchObject({ valid: true })
            // What the unlock buys, declared beside its answer: the body read's shape.
            expect(bazaar.schema.properties.output.properties.example.$defs.body.required).toEqual([
              "ok",
              "id",
              "title",
              "hash",
              "body"
            ])
            // What a facilitator sees: the client's payment echoes the challenge's resource and extensions.
            const echoed = { x402Version: 2, resource: v2.resource, accepted: v2.accepts[0], extensions: v2.extensions }
            const fromV2 = extractDiscoveryInfo(echoed as never, v2.accepts[0])
            expect(fromV2).toMatchObject({
              resourceUrl: `${PUBLIC_URL}/api/handoffs/${id}/unlock`,
              method: "POST",
              x402Version: 2,
              discoveryInfo: {
                input: { type: "http", method: "POST", bodyType: "json", body: { payer: expect.any(String) } },
                output: { type: "json", example: { ok: true } }
              }
            })
            expect(fromV2?.description).toContain(title)
            expect(fromV2?.description).toContain(teaser)
          }
        }))

      for (const version of ["v2", "v1"] as const) {
        it.effect(`an unmodified @x402/fetch ${version} client buys an unlock; balances split 90/10 to the micro-USDC`, () =>
          Effect.gen(function*() {
            const { balanceOf, chain } = yield* TestChain
            const { url } = yield* TestDesk
            const { buyer: buyerKey, desk } = chain.accounts
            const payee = freshPayee()
            const { filer, id } = yield* fileHandoff(0.25, payee)
            const buyer = newAgentId()
            const before = yield* Effect.promise(() =>
              Promise.all([balanceOf(buyerKey.address), balanceOf(desk.address)])
            )
            const { pay } = (version === "v2" ? v2Buyer : v1Buyer)(buyerKey.privateKey, chain.tokenAddress)

            const bought = yield* buy(pay, url, id, buyer)

            expect(bought.status).toBe(200)
            expect(bought.json).toMatchObject({ ok: true, alreadyUnlocked: false, bodyUrl: `/api/handoffs/${id}/body` })
            const { receipt } = bought.json
            expect(receipt).toMatchObject({
              handoffId: id,
              payer: buyer,
              filerDid: filer,
              priceUsd: 0.25,
              filerPayoutUsd: 0.225,
              deskFeeUsd: 0.025,
              mode: "x402",
              kind: "sale",
              network: "base-sepolia"
            })
            expect(receipt.txHash).toMatch(/^0x[0-9a-f]{64}$/)
            expect(receipt.txUrl).toBe(`${EXPLORER}/tx/${receipt.txHash}`)
            const settled = decodeHeader(
              bought.headers.get(version === "v2" ? "payment-response" : "x-payment-response")
            )
            expect(settled).toMatchObject({
              success: true,
              transaction: receipt.txHash,
              network: version === "v2" ? "eip155:84532" : "base-sepolia",
              payer: buyerKey.address
            })
            expect(yield* Effect.promise(() => balanceOf(buyerKey.address))).toBe(before[0] - PRICE)

            // The unlock kicked the outbox worker: the filer's 90 % goes out on its own.
            const [paid] = yield* eventually(receiptsOf(buyer), (_) => _[0]?.filerPayoutStatus === "sent")
            expect(paid.filerPayoutTxHash).toMatch(/^0x[0-9a-f]{64}$/)
            expect(paid.filerPayoutTxUrl).toBe(`${EXPLORER}/tx/${paid.filerPayoutTxHash}`)
            const after = yield* Effect.promise(() =>
              Promise.all([balanceOf(buyerKey.address), balanceOf(desk.address), balanceOf(payee)])
            )
            expect(after).toEqual([before[0] - PRICE, before[1] + 25_000n, 225_000n])

            const body = yield* send(`/api/handoffs/${id}/body`, { agent: buyer })
            expect(body.status).toBe(200)
            expect(body.json.body).toContain("Failed approaches")
            expect((yield* send(`/api/agents/${filer}`)).json).toMatchObject({
              earnedUsd: 0.225,
              earnedUsdOnChain: 0.225
            })
          }))
      }

      for (const version of ["v2", "v1"] as const) {
        it.effect(`an unmodified @x402/fetch ${version} client pointed at the body URL pays once and reads it`, () =>
          Effect.gen(function*() {
            const { balanceOf, chain } = yield* TestChain
            const { url } = yield* TestDesk
            const { buyer: buyerKey } = chain.accounts
            const { id } = yield* fileHandoff(0.25, freshPayee())
            const buyer = newAgentId()
            const { pay } = (version === "v2" ? v2Buyer : v1Buyer)(buyerKey.privateKey, chain.tokenAddress)
            const read = (headers: Record<string, string>) =>
              Effect.promise(async () => {
                const response = await pay(`${url}/api/handoffs/${id}/body`, { headers })
                return { status: response.status, headers: response.headers, json: await readJson(response) }
              })
            const before = yield* Effect.promise(() => balanceOf(buyerKey.address))

            // Without an identity to buy for, the payment is refused before anything is settled.
            const anonymous = yield* read({})
            expect(anonymous.status).toBe(401)
            expect(anonymous.json).toMatchObject({ ok: false, error: "agent_id_required" })
            expect(anonymous.json.message).toContain("Nothing was charged")
            expect(yield* Effect.promise(() => balanceOf(buyerKey.address))).toBe(before)

            const bought = yield* read({ "x-agent-id": buyer })
            expect(bought.status).toBe(200)
            expect(bought.json).toMatchObject({ ok: true, id })
            expect(bought.json.body).toContain("Failed approaches")
            const [receipt] = yield* receiptsOf(buyer)
            expect(receipt).toMatchObject({ handoffId: id, payer: buyer, mode: "x402", kind: "sale" })
            expect(decodeHeader(bought.headers.get(version === "v2" ? "payment-response" : "x-payment-response")))
              .toMatchObject({ success: true, transaction: receipt.txHash, payer: buyerKey.address })
            expect(yield* Effect.promise(() => balanceOf(buyerKey.address))).toBe(before - PRICE)

            // Read again through the same client: the body answers at once and nothing more is charged.
            const again = yield* read({ "x-agent-id": buyer })
            expect(again.status).toBe(200)
            expect(again.json.body).toBe(bought.json.body)
            expect(yield* receiptsOf(buyer)).toHaveLength(1)
            expect(yield* Effect.promise(() => balanceOf(buyerKey.address))).toBe(before - PRICE)
            yield* expectAuditPasses
          }))
      }

      it.effect("at the body URL HEAD never pays, and an id that reads only by Sign-In-With-X is refused before paying", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const desk = yield* TestDesk
          const { id } = yield* fileHandoff(0.25, freshPayee())
          const balance = Effect.promise(() => balanceOf(chain.accounts.buyer.address))
          const before = yield* balance
          const buyer = newAgentId()
          const payment = { "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE)) }

          const head = yield* Effect.promise(() =>
            desk.request(`/api/handoffs/${id}/body`, { method: "HEAD", agent: buyer, headers: payment })
          )
          expect(head.status).toBe(402)
          expect(head.headers.get("x-payment-response")).toBeNull()

          const signsIn = newAgentId()
          yield* send("/api/agents", { json: { id: signsIn, requireSignIn: true }, agent: signsIn })
          const refused = yield* send(`/api/handoffs/${id}/body`, { agent: signsIn, headers: payment })
          expect(refused.status).toBe(401)
          expect(refused.json).toMatchObject({ ok: false, error: "siwx_refused", reason: "siwx_required" })
          expect(yield* receiptsOf(signsIn)).toEqual([])
          expect(yield* receiptsOf(buyer)).toEqual([])
          expect(yield* balance).toBe(before)

          // Nothing was spent: the same payment still buys, for an id that reads.
          const bought = yield* send(`/api/handoffs/${id}/body`, { agent: buyer, headers: payment })
          expect(bought.status).toBe(200)
          expect(yield* balance).toBe(before - PRICE)
          yield* expectAuditPasses
        }))

      it.effect("a replayed payment returns the receipt it bought and settles nothing", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const { id } = yield* fileHandoff(0.25, chain.accounts.filer.address)
          const buyer = newAgentId()
          const challenge = yield* unlockWith(id, buyer)
          const { client } = v2Buyer(chain.accounts.buyer.privateKey, chain.tokenAddress)
          const payload = yield* Effect.promise(() =>
            client.createPaymentPayload(decodeHeader(challenge.headers.get("payment-required")))
          )
          const header = { "payment-signature": Buffer.from(JSON.stringify(payload)).toString("base64") }

          const first = yield* unlockWith(id, buyer, header)
          expect(first.status).toBe(200)
          const spent = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
          const again = yield* unlockWith(id, buyer, header)
          expect(again.status).toBe(200)
          expect(again.json.alreadyUnlocked).toBe(true)
          expect(again.json.receipt.receiptId).toBe(first.json.receipt.receiptId)
          expect(decodeHeader(again.headers.get("payment-response")).transaction).toBe(first.json.receipt.txHash)
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(spent)
          expect(yield* receiptsOf(buyer)).toHaveLength(1)
          yield* expectAuditPasses
        }))

      it.effect("no payout address: the 90 % is owed, then paid by the worker once the filer registers one", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const { filer, id } = yield* fileHandoff(0.4)
          const buyer = newAgentId()
          const { pay } = v2Buyer(chain.accounts.buyer.privateKey, chain.tokenAddress)
          const bought = yield* buy(pay, (yield* TestDesk).url, id, buyer)
          expect(bought.json.receipt).toMatchObject({ filerPayoutStatus: "owed", filerPayoutTxHash: null })
          const payouts = yield* Payouts
          yield* payouts.runOnce
          expect((yield* receiptsOf(buyer))[0].filerPayoutStatus).toBe("owed")

          const payee = freshPayee()
          yield* send("/api/agents", { json: { id: filer, payoutAddress: payee }, agent: filer })
          yield* payouts.runOnce
          const [paid] = yield* receiptsOf(buyer)
          expect(paid).toMatchObject({ filerPayoutStatus: "sent" })
          expect(yield* Effect.promise(() => balanceOf(payee))).toBe(360_000n)
          yield* payouts.runOnce
          expect(yield* Effect.promise(() => balanceOf(payee))).toBe(360_000n)
          yield* expectAuditPasses
        }))

      it.effect("a payout that floors to zero micro-USDC sends no transaction and says so", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const { id } = yield* fileHandoff(0.000001, chain.accounts.filer.address)
          const buyer = newAgentId()
          const deskBefore = yield* Effect.promise(() => balanceOf(chain.accounts.desk.address))
          const filerBefore = yield* Effect.promise(() => balanceOf(chain.accounts.filer.address))
          const { pay } = v2Buyer(chain.accounts.buyer.privateKey, chain.tokenAddress)
          const bought = yield* buy(pay, (yield* TestDesk).url, id, buyer)
          expect(bought.json.receipt).toMatchObject({
            filerPayoutUsd: 0,
            deskFeeUsd: 0.000001,
            filerPayoutStatus: "zero"
          })
          yield* (yield* Payouts).runOnce
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.desk.address))).toBe(deskBefore + 1n)
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.filer.address))).toBe(filerBefore)
          yield* expectAuditPasses
        }))
    })
  })
}
