import { describe, expect, layer } from "@effect/vitest"
import {
  type CompleteSIWxInfo,
  createSIWxPayload,
  encodeSIWxHeader,
  SIGN_IN_WITH_X,
  wrapFetchWithSIWx
} from "@x402/extensions/sign-in-with-x"
import { Effect } from "effect"
import { privateKeyToAccount } from "viem/accounts"
import { PUBLIC_URL, readJson, TestDesk } from "../support/Desk.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import { decodeHeader, fileHandoff, freshPayee, send, TestChain, unlockWith, x402DeskOn } from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"

const PRICE = 150_000n

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`x402 sign-in by the paying wallet over ${backend.name}`, () => {
    layer(x402DeskOn(backend.layer), { timeout: 120_000, excludeTestServices: true })((it) => {
      /**
       * The desk as a client reaches it at its public URL (DESK_PUBLIC_URL, which sign-ins are bound to); the
       * requests go to the test server. Every SIGN-IN-WITH-X header sent is kept, to be replayed.
       */
      const atPublicUrl = (deskUrl: string, sent: Array<string>): typeof fetch => async (input, init) => {
        const request = new Request(input, init)
        const header = request.headers.get(SIGN_IN_WITH_X)
        if (header !== null) sent.push(header)
        const response = await fetch(request.url.replace(PUBLIC_URL, deskUrl), { headers: request.headers })
        return new Response(await response.arrayBuffer(), { status: response.status, headers: response.headers })
      }

      /** A handoff bought by the buyer wallet with a v2 payment, as identity `agent`. */
      const bought = Effect.gen(function*() {
        const { chain } = yield* TestChain
        const { id } = yield* fileHandoff(0.15, freshPayee())
        const agent = newAgentId()
        const paid = yield* unlockWith(id, agent, {
          "payment-signature": yield* Effect.promise(() => forger(chain).v2(PRICE))
        })
        expect(paid.status).toBe(200)
        return { id, agent }
      })

      /** The sign-in challenge of a body's 402, as a client without X-AGENT-ID receives it. */
      const challengeOf = (id: string) =>
        Effect.map(send(`/api/handoffs/${id}/body`), (answer) => {
          expect(answer.status).toBe(402)
          const extension = decodeHeader(answer.headers.get("payment-required")).extensions[SIGN_IN_WITH_X]
          return { ...extension.info, ...extension.supportedChains[0] } as CompleteSIWxInfo
        })

      const readWith = (id: string, header: string) =>
        send(`/api/handoffs/${id}/body`, { headers: { [SIGN_IN_WITH_X]: header } })

      /** A fresh proof by the buyer wallet for `id`'s body, signed over its challenge. */
      const signedFor = (id: string) =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          const info = yield* challengeOf(id)
          const buyer = privateKeyToAccount(chain.accounts.buyer.privateKey)
          return yield* Effect.promise(() =>
            createSIWxPayload(info, buyer, `${PUBLIC_URL}/api/handoffs/${id}/body`).then(encodeSIWxHeader)
          )
        })

      it.effect("the wallet that paid reads the body with no X-AGENT-ID, through x402's own wrapFetchWithSIWx", () =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          const { url } = yield* TestDesk
          const { agent, id } = yield* bought
          const info = yield* challengeOf(id)
          expect(info).toMatchObject({
            domain: new URL(PUBLIC_URL).host,
            uri: `${PUBLIC_URL}/api/handoffs/${id}/body`,
            chainId: `eip155:${chain.chainId}`,
            type: "eip191"
          })
          expect(Date.parse(info.expirationTime!) - Date.parse(info.issuedAt)).toBe(5 * 60 * 1000)

          const sent: Array<string> = []
          const wallet = wrapFetchWithSIWx(atPublicUrl(url, sent), privateKeyToAccount(chain.accounts.buyer.privateKey))
          const response = yield* Effect.promise(() => wallet(`${PUBLIC_URL}/api/handoffs/${id}/body`))
          const read = yield* Effect.promise(() => readJson(response))
          expect(response.status).toBe(200)
          expect(read).toEqual((yield* send(`/api/handoffs/${id}/body`, { agent })).json)
          expect(sent).toHaveLength(1)

          // HEAD asks what a GET would answer and spends no sign-in: a fresh proof still reads after it.
          const fresh = yield* signedFor(id)
          const asked = yield* Effect.promise(() =>
            fetch(`${url}/api/handoffs/${id}/body`, { method: "HEAD", headers: { [SIGN_IN_WITH_X]: fresh } })
          )
          expect(asked.status).toBe(200)
          expect((yield* readWith(id, fresh)).status).toBe(200)

          // The same signed message again: a replay.
          const replayed = yield* readWith(id, sent[0]!)
          expect(replayed.status).toBe(401)
          expect(replayed.json).toMatchObject({ ok: false, error: "siwx_refused", reason: "siwx_nonce_used" })
        }))

      it.effect("every other proof is refused with a stable reason and reads nothing", () =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          const { id } = yield* bought
          const buyer = privateKeyToAccount(chain.accounts.buyer.privateKey)
          const other = privateKeyToAccount(chain.accounts.other.privateKey)
          const bodyUrl = `${PUBLIC_URL}/api/handoffs/${id}/body`
          const refusal = (header: string) =>
            Effect.map(readWith(id, header), (answer) => {
              expect(answer.status).toBe(401)
              expect(answer.json).toMatchObject({ ok: false, error: "siwx_refused" })
              expect(answer.json).not.toHaveProperty("body")
              return answer.json.reason
            })
          const signed = (info: CompleteSIWxInfo, signer = buyer, url = bodyUrl) =>
            Effect.promise(() => createSIWxPayload(info, signer, url).then(encodeSIWxHeader))

          // A wallet that never paid for this handoff.
          expect(yield* refusal(yield* signed(yield* challengeOf(id), other))).toBe("siwx_wallet_not_paid")
          // Issued ten minutes ago: expired.
          const old = new Date(Date.now() - 10 * 60 * 1000)
          const stale = {
            ...(yield* challengeOf(id)),
            issuedAt: old.toISOString(),
            expirationTime: new Date(old.getTime() + 5 * 60 * 1000).toISOString()
          }
          expect(yield* refusal(yield* signed(stale))).toBe("invalid_siwx_issued_at_too_old")
          // Bound to another origin (a look-alike site asked the wallet to sign).
          const elsewhere = {
            ...(yield* challengeOf(id)),
            domain: "desk.evil",
            uri: `http://desk.evil/api/handoffs/${id}/body`
          }
          expect(yield* refusal(yield* signed(elsewhere, buyer, elsewhere.uri))).toBe("invalid_siwx_domain_mismatch")
          // Bound to another resource of this desk.
          const otherResource = { ...(yield* challengeOf(id)), uri: `${PUBLIC_URL}/api/handoffs/DESK-999999/body` }
          expect(yield* refusal(yield* signed(otherResource))).toBe("invalid_siwx_uri_mismatch")
          // Signed by another key for the buyer's address.
          const forged = JSON.parse(Buffer.from(yield* signed(yield* challengeOf(id), other), "base64").toString())
          const claimed = Buffer.from(JSON.stringify({ ...forged, address: buyer.address })).toString("base64")
          expect(yield* refusal(claimed)).toBe("invalid_siwx_signature")
          // Not a SIWx message at all.
          expect(yield* refusal("not-base64!")).toBe("invalid_siwx_header")
        }))

      it.effect("a buyer may require sign-in for its id: its id alone then reads nothing, its wallet still does", () =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          const { url } = yield* TestDesk
          const { agent, id } = yield* bought
          const set = yield* send("/api/agents", { json: { id: agent, requireSignIn: true }, agent })
          expect(set.status).toBe(200)
          expect(set.json).toMatchObject({ id: agent, requireSignIn: true })
          const byId = yield* send(`/api/handoffs/${id}/body`, { agent })
          expect(byId.status).toBe(401)
          expect(byId.json).toMatchObject({ error: "siwx_refused", reason: "siwx_required" })
          expect(byId.json).not.toHaveProperty("body")
          // One way: whoever knows the id cannot turn it off.
          const unset = yield* send("/api/agents", { json: { id: agent, requireSignIn: false }, agent })
          expect(unset.status).toBe(422)
          expect((yield* send(`/api/agents/${agent}`)).json.requireSignIn).toBe(true)

          const wallet = wrapFetchWithSIWx(atPublicUrl(url, []), privateKeyToAccount(chain.accounts.buyer.privateKey))
          const response = yield* Effect.promise(() => wallet(`${PUBLIC_URL}/api/handoffs/${id}/body`))
          expect(response.status).toBe(200)
          expect((yield* Effect.promise(() => readJson(response))).id).toBe(id)
        }))

      it.effect("a buyer id still reads as before, and a body nobody bought stays sealed behind the challenge", () =>
        Effect.gen(function*() {
          const { agent, id } = yield* bought
          expect((yield* send(`/api/handoffs/${id}/body`, { agent })).status).toBe(200)
          const stranger = yield* send(`/api/handoffs/${id}/body`, { agent: newAgentId() })
          expect(stranger.status).toBe(402)
          expect(decodeHeader(stranger.headers.get("payment-required")).extensions).toHaveProperty(SIGN_IN_WITH_X)
        }))
    })

    // A desk that also sells desk receipts (DESK_PAYMENT_REQUIRED unset): an unlock without X-PAYMENT records one.
    layer(x402DeskOn(backend.layer, { config: { paymentRequired: false } }), {
      timeout: 120_000,
      excludeTestServices: true
    })((it) => {
      it.effect("an id that reads only by signing in is asked to pay on-chain, never sold a desk receipt it could not read", () =>
        Effect.gen(function*() {
          const agent = newAgentId()
          expect((yield* send("/api/agents", { json: { id: agent, requireSignIn: true }, agent })).status).toBe(200)
          const { id } = yield* fileHandoff(0.15, freshPayee())
          // Without X-PAYMENT this desk sells desk receipts; no wallet pays for one, so none could sign in to read.
          const refused = yield* unlockWith(id, agent)
          expect(refused.status).toBe(402)
          expect(refused.json).toMatchObject({ error: "payment_required" })
          expect(refused.json.message).toContain("Sign-In-With-X")
          expect(refused.json.accepts).toHaveLength(1)
          expect((yield* send(`/api/receipts?payer=${agent}`)).json.total).toBe(0)
          // Another id still buys by desk receipt here.
          const other = newAgentId()
          expect((yield* unlockWith(id, other)).json).toMatchObject({ ok: true, receipt: { mode: "desk" } })
          // The demo packet's body is given away: it is unlocked and read by id, sign-in or not.
          const sandbox = (yield* send("/api/sandbox")).json
          expect((yield* unlockWith(sandbox.handoffId, agent)).status).toBe(200)
          expect((yield* send(`/api/handoffs/${sandbox.handoffId}/body`, { agent })).status).toBe(200)
        }))
    })
  })
}
