import { Either, Option, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import type { X402Settings } from "../../adapters/settlement/X402Config.ts"
import { checkPayment } from "../../adapters/settlement/X402Requirements.ts"
import type { Offer } from "../../src/Settlement.ts"

const settings: X402Settings = {
  rpcUrl: "http://127.0.0.1:1",
  network: "base-sepolia",
  chainId: 84532,
  asset: { address: `0x${"11".repeat(20)}`, name: "USDC", version: "2" },
  payTo: `0x${"22".repeat(20)}`,
  walletKey: Option.none(),
  facilitatorUrl: Option.none(),
  facilitatorHeaders: Redacted.make({ verify: {}, settle: {}, supported: {} }),
  explorerUrl: Option.none(),
  rpcTimeoutMs: 1_000,
  confirmTimeoutMs: 1_000,
  maxTimeoutSeconds: 300
}
const offer: Offer = { handoffId: "DESK-2", title: "t", teaser: "t", priceMicro: 250_000, resource: "/x" }

const refusalOf = (header: string) => {
  const result = checkPayment(settings, offer, header, 0)
  if (Either.isRight(result)) throw new Error("a payment was taken")
  return result.left
}
const base64 = (text: string) => Buffer.from(text).toString("base64")

// A payment header that is no payment is refused with what to send, in a line an agent can act on (an outside
// check found the whole schema of both payload versions, about 2 KB, quoted in the message).
describe("a payment header that is no x402 payment", () => {
  it.each([
    ["base64 of no JSON", "garbage", /base64 but not of JSON/],
    ["JSON of no payload", base64(JSON.stringify({ hello: 1 })), /not an x402 v1 or v2 exact EVM payment payload/],
    ["a v2 payload missing its fields", base64(JSON.stringify({ x402Version: 2 })), /payment payload/]
  ])("%s: invalid_payment_header, in a short message", (_, header, message) => {
    const refusal = refusalOf(header)
    expect(refusal.reason).toBe("invalid_payment_header")
    expect(refusal.message).toMatch(message)
    expect(refusal.message).toMatch(/@x402\/fetch/)
    expect(refusal.message.length).toBeLessThan(400)
    expect(refusal.message).not.toContain("readonly")
  })
})
