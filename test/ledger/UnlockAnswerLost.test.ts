import { SqlClient, SqlError } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Redacted } from "effect"
import * as Postgres from "../../adapters/storage/Postgres.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { ReceiptRepo } from "../../src/Ledger/ReceiptRepo.ts"
import { cuttableProxy } from "../support/CuttableProxy.ts"
import { deskSaleOf } from "../support/DeskSale.ts"
import { filedAs } from "../support/Filed.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends, DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

/** The receipt id whose batch, once sent, is to get no answer; set by the test. */
let loseAnswerTo: Buffer | undefined
/** What the desk sent that got no answer. */
let unanswered: Buffer | undefined

/** A fresh PostgreSQL database reached through a proxy that loses the answer to the batch naming `loseAnswerTo`. */
const proxiedPostgres = Layer.unwrapScoped(Effect.gen(function*() {
  const url = new URL(yield* freshDatabaseUrl(DATABASE_URL!))
  const proxy = yield* cuttableProxy({ host: url.hostname, port: Number(url.port || "5432") }, (chunk, link) => {
    if (loseAnswerTo !== undefined && chunk.includes(loseAnswerTo)) {
      loseAnswerTo = undefined
      unanswered = chunk
      link.replyLost = true
    }
  })
  url.hostname = "127.0.0.1"
  url.port = String(proxy.port)
  return Postgres.layer(Redacted.make(url.toString()))
}))

// PostgreSQL's run only: PGlite runs in the desk's own process, with no connection to lose.
const onPostgres = backends.some((_) => _.name === "postgres" && _.available)

describe.skipIf(!onPostgres)("unlocks written together whose answer is lost", () => {
  it.layer(servicesOn(proxiedPostgres), { timeout: 60_000 })((it) => {
    it.effect("fail, and are not run again to be told they were held already; a retry reads the receipts", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const receipts = yield* ReceiptRepo
        const filer = DeskId.make(newAgentId())
        const seq = Number((yield* filedAs(filer, {})).replace("DESK-", ""))
        const [leader, first, second] = [newAgentId(), newAgentId(), newAgentId()]
        const sales = [deskSaleOf(seq, leader, filer), deskSaleOf(seq, first, filer), deskSaleOf(seq, second, filer)]
        // The first leaves alone; the other two board the next batch together, whose answer the link loses after
        // the server has it (and commits it).
        loseAnswerTo = Buffer.from(sales[1]!.receiptId)
        const answers = yield* Effect.all(
          sales.map((sale) => Effect.either(receipts.deskUnlock(sale, sale.priceMicro, "title"))),
          { concurrency: "unbounded" }
        )
        // Both unlocks went in the one statement whose answer was lost: a batch of two, not two of one.
        expect(sales.slice(1).map((sale) => unanswered?.includes(sale.receiptId))).toEqual([true, true])
        expect(Either.getOrThrow(answers[0]!).outcome).toBe("recorded")
        // Charged by this request, each must not hear "held already, nothing charged": it hears a failure.
        for (const answer of answers.slice(1)) {
          expect(Either.isLeft(answer) && answer.left instanceof SqlError.SqlError, JSON.stringify(answer)).toBe(true)
        }
        // The server did write them: one receipt each, each payer charged once.
        // (Read until both are there, up to 10 s: on a loaded machine the server may still be at the statement when
        // the link closes, 300 ms after it was sent.)
        const readWritten = sql<{ payer: string; spent: number }>`SELECT r.payer, a.spent_micro::int AS spent
          FROM receipts r JOIN agents a ON a.id = r.payer
          WHERE r.receipt_id IN ${sql.in(sales.slice(1).map((_) => _.receiptId))} ORDER BY r.payer`
        let written = yield* readWritten
        for (let tries = 0; tries < 100 && written.length < 2; tries++) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
          written = yield* readWritten
        }
        expect(written).toEqual([first, second].sort().map((payer) => ({ payer, spent: 500_000 })))
        // Retried, each is told the truth of its retry: it holds the unlock, and this request charged nothing.
        for (const sale of sales.slice(1)) {
          const retry = yield* receipts.deskUnlock(deskSaleOf(seq, sale.payer, filer), 500_000, "title")
          expect(retry.outcome).toBe("unlocked")
        }
      }).pipe(Effect.provide(ReceiptRepo.layer)))
  })
})
