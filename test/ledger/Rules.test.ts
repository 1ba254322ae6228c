import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { countsAsPurchase, kindOf, mayVote, OWED, spendOf, termsOf } from "../../src/Ledger/Rules.ts"

const handoff = { is_demo: false, filer_did: "did:desk:filer" }
const sale = { kind: "sale", mode: "x402", priceMicro: 250_000, payoutAddress: "0xabc", payoutsEnabled: true } as const

describe("ledger rules", () => {
  it("kind: the demo packet, a filer's own handoff, anyone else's purchase", () => {
    expect(kindOf({ ...handoff, is_demo: true }, "did:desk:buyer")).toBe("demo")
    expect(kindOf(handoff, "did:desk:filer")).toBe("self")
    expect(kindOf(handoff, "did:desk:buyer")).toBe("sale")
  })

  it("a sale and a paid self unlock spend, only a sale votes, every kind but self counts as a purchase", () => {
    expect([spendOf("sale", "desk", 7), spendOf("self", "desk", 7), spendOf("demo", "desk", 7)]).toEqual([7, 0, 0])
    expect([spendOf("sale", "x402", 7), spendOf("self", "x402", 7), spendOf("demo", "x402", 7)]).toEqual([7, 7, 0])
    expect([mayVote("sale"), mayVote("self"), mayVote("demo")]).toEqual([true, false, false])
    expect([countsAsPurchase("sale"), countsAsPurchase("self"), countsAsPurchase("demo")]).toEqual([true, false, true])
  })

  it("an x402 sale: 90 % floored to the filer, paid at once with an address and a wallet, else owed", () => {
    expect(termsOf(sale)).toEqual({
      filerMicro: 225_000,
      deskMicro: 25_000,
      payoutStatus: "pending",
      payout: "pending"
    })
    expect(termsOf({ ...sale, payoutAddress: null })).toMatchObject({ payoutStatus: "owed", payout: "owed" })
    expect(termsOf({ ...sale, payoutsEnabled: false })).toMatchObject({ payoutStatus: "owed", payout: "owed" })
    expect(termsOf({ ...sale, priceMicro: 1 })).toEqual({
      filerMicro: 0,
      deskMicro: 1,
      payoutStatus: "zero",
      payout: null
    })
    expect(termsOf({ ...sale, priceMicro: 11 })).toMatchObject({ filerMicro: 9, deskMicro: 2 })
    // Near the 1e9 USD ceiling, price × 9000 leaves the safe integers: these two came out one micro-USDC off.
    expect(termsOf({ ...sale, priceMicro: 900_860_359_188_781 }).filerMicro).toBe(810_774_323_269_902)
    expect(termsOf({ ...sale, priceMicro: 554_741_664_510_780 }).filerMicro).toBe(499_267_498_059_702)
  })

  it("a desk-receipt sale moves no USDC: its share is `ledger`, with no payout row, whatever the address", () => {
    expect(termsOf({ ...sale, mode: "desk" })).toEqual({
      filerMicro: 225_000,
      deskMicro: 25_000,
      payoutStatus: "ledger",
      payout: null
    })
    expect(OWED).not.toContain("ledger")
  })

  it("self-purchases and the demo packet owe the filer nothing: the desk keeps the whole price", () => {
    for (const kind of ["self", "demo"] as const) {
      for (const mode of ["desk", "x402"] as const) {
        expect(termsOf({ ...sale, kind, mode })).toEqual({
          filerMicro: 0,
          deskMicro: 250_000,
          payoutStatus: "zero",
          payout: null
        })
      }
    }
  })

  it("for any price and case: the split adds up, the status agrees with the amount, a payout row exactly when a status promises one", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000_000_000_000 }),
        fc.constantFrom<"sale" | "self" | "demo">("sale", "self", "demo"),
        fc.constantFrom<"desk" | "x402">("desk", "x402"),
        fc.option(fc.constant("0xabc"), { nil: null }),
        fc.boolean(),
        (priceMicro, kind, mode, payoutAddress, payoutsEnabled) => {
          const terms = termsOf({ kind, mode, priceMicro, payoutAddress, payoutsEnabled })
          expect(terms.filerMicro + terms.deskMicro).toBe(priceMicro)
          expect(terms.filerMicro).toBe(kind === "sale" ? Number((BigInt(priceMicro) * 9n) / 10n) : 0)
          expect(terms.payoutStatus === "zero").toBe(terms.filerMicro === 0)
          expect(terms.payout !== null).toBe(OWED.includes(terms.payoutStatus))
          expect(terms.payout === null || terms.payout === terms.payoutStatus).toBe(true)
          expect(terms.payoutStatus === "ledger").toBe(mode === "desk" && terms.filerMicro > 0)
        }
      )
    )
  })
})
