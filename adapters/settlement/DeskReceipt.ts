import { Config, Duration, Effect, Layer, Option } from "effect"
import { PaymentInvalid } from "../../src/Domain/Errors.ts"
import { type Rail, Settlement } from "../../src/Settlement.ts"
import { SignIn } from "../../src/SignIn.ts"

const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"

const refuse = Effect.fail(
  new PaymentInvalid({
    message: "This desk settles by desk receipt only: unlock without X-PAYMENT.",
    reason: "x402_not_configured"
  })
)

/** Desk receipts: the ledger records the sale and no USDC moves. */
const settlement = Layer.effect(
  Settlement,
  Effect.gen(function*() {
    const network = yield* Config.string("DESK_NETWORK").pipe(Config.withDefault("base"))
    const rail: Rail = {
      stage: network === "base" ? "mainnet" : "testnet",
      network,
      label: `desk receipts (ledger only) on ${network}`,
      asset: "USDC",
      assetAddress: network === "base" ? BASE_USDC : null,
      eip712: network === "base" ? { name: "USD Coin", version: "2" } : null,
      payTo: null,
      x402Ready: false,
      facilitatorKind: "none",
      payoutEnabled: false,
      explorerTxUrl: () => null,
      note: "No chain is configured: unlocks write desk receipts and move no USDC; X-PAYMENT is refused."
    }
    return Settlement.of({
      rail,
      accepts: () => [],
      paymentRequiredHeader: () => Option.none(),
      paymentResponseHeader: () => {
        throw new Error("desk receipts settle nothing, so there is no payment response")
      },
      parse: () => refuse,
      verify: () => refuse,
      settle: () => Effect.dieMessage("desk receipts settle nothing"),
      settleTimeout: Duration.zero,
      lookup: () => Effect.dieMessage("desk receipts settle nothing"),
      blockNumber: Effect.dieMessage("desk receipts have no chain"),
      payouts: Option.none(),
      facilitatorReachable: Effect.succeed(false)
    })
  })
)

/** No wallet pays a desk-receipt desk, so none signs in to it. */
export const layer = Layer.merge(settlement, SignIn.none)
