import { Duration, Effect, Layer, Option } from "effect"
import { type Rail, Settlement } from "../../src/Settlement.ts"

type Port = Settlement["Type"]

const rail: Rail = {
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
  Effect.dieMessage(`Settlement.${method} was called but the test did not stub it`)

/** A Settlement that dies on every method the test did not stub, so a test states what it relies on. */
export const layerTest = (stubs: Partial<Port> = {}) =>
  Layer.succeed(
    Settlement,
    Settlement.of({
      rail,
      accepts: () => {
        throw new Error("Settlement.accepts was called but the test did not stub it")
      },
      paymentRequiredHeader: () => Option.none(),
      paymentResponseHeader: () => {
        throw new Error("Settlement.paymentResponseHeader was called but the test did not stub it")
      },
      parse: unexpected("parse"),
      verify: unexpected("verify"),
      settleTimeout: Duration.seconds(1),
      settle: unexpected("settle"),
      lookup: unexpected("lookup"),
      blockNumber: Effect.dieMessage("Settlement.blockNumber was not stubbed"),
      payouts: Option.none(),
      facilitatorReachable: Effect.dieMessage("Settlement.facilitatorReachable was not stubbed"),
      ...stubs
    })
  )
