import { Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { HandoffRepo } from "../src/Catalog/HandoffRepo.ts"
import { ReceiptRepo } from "../src/Ledger/ReceiptRepo.ts"
import { countsAsPurchase, kindOf, spendOf, termsOf } from "../src/Ledger/Rules.ts"
import { newReceiptId } from "../src/Ledger/Sales.ts"
import { closedLoop } from "./DirectSql.ts"
import type { Prng } from "./Random.ts"

/**
 * The floor for unlock + body: the desk's own statements for one (the handoff's sealed fields, the unlock, the body
 * read, each boarded with those of other clients as the desk boards them), each unlock by a new identity, on the
 * same driver and pool, by `connections` concurrent clients, with no HTTP around them. What it reaches is what the
 * database (with the bench's load beside it) allows the desk. Its receipts are desk receipts like the scenario's,
 * so the books stay balanced. CPU per unlock is this process's.
 */
export const directUnlock = (random: Prng, handoffs: number, connections: number, seconds: number) =>
  Effect.gen(function*() {
    const repo = yield* HandoffRepo
    const receipts = yield* ReceiptRepo
    const unlockAndRead = Effect.gen(function*() {
      const payer = `did:desk:${randomBytes(16).toString("hex")}`
      const handoff = yield* Effect.flatten(repo.findSealed(random.int(1, handoffs)))
      const kind = kindOf(handoff, payer)
      const terms = termsOf({
        kind,
        mode: "desk",
        priceMicro: handoff.price_micro,
        payoutAddress: null,
        payoutsEnabled: false
      })
      const outcome = yield* receipts.deskUnlock(
        {
          receiptId: newReceiptId(),
          handoffSeq: handoff.seq,
          payer,
          filerDid: handoff.filer_did,
          priceMicro: handoff.price_micro,
          ...terms,
          kind,
          mode: "desk",
          network: "base",
          countsAsPurchase: countsAsPurchase(kind),
          payment: null,
          payoutAddress: null
        },
        spendOf(kind, "desk", handoff.price_micro),
        handoff.title
      )
      if (outcome.outcome !== "recorded") return false
      const read = yield* repo.findSealedFor(handoff.seq, payer)
      return Option.isSome(read) && read.value.body !== null
    })
    return yield* closedLoop(unlockAndRead, connections, seconds)
  }).pipe(Effect.provide(Layer.merge(HandoffRepo.layer, ReceiptRepo.layer)))
