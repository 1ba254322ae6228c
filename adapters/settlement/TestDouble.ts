import { Context, Duration, Effect, Layer, Option } from "effect"
import { PayoutChannel } from "../../src/Payouts/Rail.ts"
import { type PaymentRail, type Rail, RailProfile, Settlement } from "../../src/Settlement.ts"

const profile: Rail = {
  stage: "test",
  network: "test",
  label: "test double",
  asset: "USDC",
  assetAddress: null,
  eip712: null,
  payTo: null,
  x402Ready: false,
  facilitatorKind: "none",
  payoutEnabled: false,
  explorerTxUrl: () => null,
  note: "test double"
}

const unexpected = (method: string) => () =>
  Effect.dieMessage(`PaymentRail.${method} was called but the test did not stub it`)

const thrown = (method: string) => () => {
  throw new Error(`PaymentRail.${method} was called but the test did not stub it`)
}

/** A payment rail that dies on every method the test did not stub, so a test states what it relies on. */
export const layerTest = (stubs: Partial<PaymentRail> = {}) => {
  const rail: PaymentRail = {
    challenge: thrown("challenge"),
    challengeV2: thrown("challengeV2"),
    check: thrown("check"),
    verify: unexpected("verify"),
    settleTimeout: Duration.seconds(1),
    settle: unexpected("settle"),
    lookup: unexpected("lookup"),
    settled: thrown("settled"),
    blockNumber: Effect.dieMessage("PaymentRail.blockNumber was not stubbed"),
    facilitatorReachable: Effect.dieMessage("PaymentRail.facilitatorReachable was not stubbed"),
    ...stubs
  }
  return Layer.succeedContext(
    Context.make(Settlement, Option.some(rail)).pipe(
      Context.add(RailProfile, profile),
      Context.add(PayoutChannel, PayoutChannel.none)
    )
  )
}
