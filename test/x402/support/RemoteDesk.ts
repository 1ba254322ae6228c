import { Context, Effect, Layer, Logger, Option } from "effect"
import * as X402 from "../../../adapters/settlement/X402.ts"
import * as Pglite from "../../../adapters/storage/Pglite.ts"
import { deskOn } from "../../support/Desk.ts"
import { chainScoped, TestChain } from "./Chain.ts"
import { startFacilitator } from "./Facilitator.ts"

export class RemoteFacilitator extends Context.Tag("test/x402/RemoteFacilitator")<
  RemoteFacilitator,
  Awaited<ReturnType<typeof startFacilitator>>
>() {}

/** The desk on base-sepolia with DESK_FACILITATOR_URL: settlement by x402's facilitator with its own wallet. */
export const remoteFacilitatorDesk = Layer.unwrapScoped(
  Effect.gen(function*() {
    const testChain = yield* chainScoped()
    const facilitator = yield* Effect.acquireRelease(
      Effect.promise(() => startFacilitator(testChain.chain, testChain.chain.accounts.other.privateKey)),
      (_) => Effect.promise(_.close)
    )
    const settings = { ...testChain.settings, facilitatorUrl: Option.some(facilitator.url) }
    return Layer.mergeAll(
      deskOn(Pglite.layer({}), X402.layer(settings), {
        config: { paymentRequired: true, outboxIntervalMs: 3_600_000 }
      }),
      Layer.succeed(TestChain, { ...testChain, settings }),
      Layer.succeed(RemoteFacilitator, facilitator)
    ).pipe(Layer.provide(Logger.remove(Logger.defaultLogger)))
  })
)
