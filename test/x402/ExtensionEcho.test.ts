import { describe, expect, layer } from "@effect/vitest"
import { extractDiscoveryInfo } from "@x402/extensions/bazaar"
import { PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier"
import { Effect } from "effect"
import { PUBLIC_URL } from "../support/Desk.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { decodeHeader, fileHandoff, freshPayee, TestChain, unlockWith } from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import { RemoteFacilitator, remoteFacilitatorDesk } from "./support/RemoteDesk.ts"

/**
 * A v2 payment echoes the challenge's `resource` and `extensions` beside the signed authorization, which covers
 * neither. x402's resource server refuses an echo that changes what it declared (`extension_echo_mismatch`); and
 * whatever the desk forwards to a facilitator is what the facilitator's Bazaar catalog records about the desk.
 */

const PRICE = 150_000n
const POISON = "https://evil.example/paste-your-wallet-key-here"

/** A v2 payment for a fresh handoff by a fresh agent, echoing the decoded challenge as `edit` rewrites it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const payEchoing = (edit: (challenge: any) => { resource: unknown; extensions: Record<string, unknown> }) =>
  Effect.gen(function*() {
    const { chain } = yield* TestChain
    const { id } = yield* fileHandoff(0.15, freshPayee())
    const buyer = newAgentId()
    const challenge = decodeHeader((yield* unlockWith(id, buyer)).headers.get("payment-required"))
    const { extensions, resource } = edit(structuredClone(challenge))
    const signed = JSON.parse(
      Buffer.from(yield* Effect.promise(() => forger(chain).v2(PRICE, { extensions })), "base64").toString()
    )
    const payment = Buffer.from(JSON.stringify({ ...signed, resource })).toString("base64")
    return { challenge, answer: yield* unlockWith(id, buyer, { "payment-signature": payment }) }
  })

describe("x402 v2: the echoed extensions and resource", () => {
  layer(remoteFacilitatorDesk, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("an echo that changes a declared field is refused as x402 refuses it, and nothing is charged", () =>
      Effect.gen(function*() {
        const { balanceOf, chain } = yield* TestChain
        const facilitator = yield* RemoteFacilitator
        const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
        const settles = facilitator.settled().length
        const { answer } = yield* payEchoing((challenge) => {
          challenge.extensions.bazaar.info.output.example.bodyUrl = POISON
          return challenge
        })
        expect(answer.status).toBe(402)
        expect(answer.json).toMatchObject({ error: "payment_invalid", reason: "extension_echo_mismatch" })
        expect(facilitator.settled().length).toBe(settles)
        expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before)
      }))

    it.effect("what x402 lets a client add (fields, extensions, another resource) never reaches the facilitator", () =>
      Effect.gen(function*() {
        const facilitator = yield* RemoteFacilitator
        const { answer, challenge } = yield* payEchoing((challenge) => {
          challenge.extensions.bazaar.info.output.example.homepage = POISON
          challenge.extensions[PAYMENT_IDENTIFIER].info.id = "pay_echo_test_0001"
          return {
            resource: { ...challenge.resource, url: POISON },
            extensions: { ...challenge.extensions, "made-up": { info: { url: POISON } } }
          }
        })
        expect(answer.status).toBe(200)
        const { paymentPayload, paymentRequirements } = facilitator.settled().at(-1)!
        expect(JSON.stringify(paymentPayload)).not.toContain(POISON)
        expect(paymentPayload.resource.url).toBe(challenge.resource.url)
        expect(paymentPayload.resource.url.startsWith(PUBLIC_URL)).toBe(true)
        expect(paymentPayload.extensions.bazaar).toEqual(challenge.extensions.bazaar)
        expect(paymentPayload.extensions[PAYMENT_IDENTIFIER].info.id).toBe("pay_echo_test_0001")
        expect(Object.keys(paymentPayload.extensions).sort()).toEqual(["bazaar", PAYMENT_IDENTIFIER])
        const indexed = extractDiscoveryInfo(paymentPayload, paymentRequirements)
        expect(indexed?.resourceUrl).toBe(challenge.resource.url)
      }))
  })
})
