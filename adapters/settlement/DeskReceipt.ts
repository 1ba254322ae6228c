import { Config, Context, Effect, Layer, Option } from "effect"
import { PayoutChannel } from "../../src/Payouts/Rail.ts"
import { type Rail, RailProfile, Settlement } from "../../src/Settlement.ts"
import { SignIn } from "../../src/SignIn.ts"

const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"

/** Desk receipts: no rail takes payments, the ledger records the sale and no USDC moves. */
const profile = Effect.map(
  Config.string("DESK_NETWORK").pipe(Config.withDefault("base")),
  (network): Rail => ({
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
  })
)

/** No rail, no payouts, and no wallet pays a desk-receipt desk, so none signs in to it. */
export const layer = Layer.mergeAll(
  Layer.succeedContext(Context.make(Settlement, Option.none()).pipe(Context.add(PayoutChannel, PayoutChannel.none))),
  Layer.effect(RailProfile, profile),
  SignIn.none
)
