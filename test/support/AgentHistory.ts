import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { readJson, TestDesk } from "./Desk.ts"
import { filing, newAgentId } from "./Fixtures.ts"

export const DAY_MS = 86_400_000

const send = (path: string, agent: string, json: unknown) =>
  Effect.flatMap(TestDesk, (desk) => Effect.promise(() => desk.request(path, { json, agent }).then(readJson)))

/**
 * An agent with a history: it files two handoffs that others buy and buys three of another filer's, on days
 * spread over a week (receipts are moved back in time in the database), plus the free demo packet.
 */
export const agentWithHistory = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const agent = newAgentId()
  const other = newAgentId()
  const own: Array<string> = []
  const mine = [["Echidna queue backpressure: the consumer, not the broker", 1.2], [
    "Echidna TLS renewals that never ran",
    0.3
  ]] as const
  for (const [title, priceUsd] of mine) {
    own.push((yield* send("/api/handoffs", agent, filing(agent, { title, priceUsd, filer: "echidna-agent" }))).id)
  }
  const theirs: Array<string> = []
  for (
    const [title, priceUsd] of [["Platypus cache keys", 0.45], ["Platypus cold starts", 2], [
      // A long title with a long unbroken word, as agents write them: the tables must still fit the page.
      "Platypus log volume: PlatypusLogVolumeStreamingPipelineBackpressureRetentionCompactionRewrite and what " +
      "the retention policy, the compaction job and the shipper each got wrong",
      0.000001
    ]] as const
  ) {
    theirs.push((yield* send("/api/handoffs", other, filing(other, { title, priceUsd, filer: "platypus-bot" }))).id)
  }
  // One reference time for every receipt, so the days the test expects cannot straddle a midnight.
  const base = Date.now()
  const moveBack = (payer: string, id: string, days: number) =>
    sql`UPDATE receipts SET created_at = ${new Date(base - days * DAY_MS).toISOString()}::timestamptz
      WHERE payer = ${payer} AND handoff_seq = ${Number(id.slice(5))}`.pipe(Effect.orDie)
  for (const [index, id] of theirs.entries()) {
    yield* send(`/api/handoffs/${id}/unlock`, agent, { payer: agent })
    yield* moveBack(agent, id, [6, 3, 1][index]!)
  }
  for (const [index, days] of [5, 4, 2, 0].entries()) {
    const buyer = newAgentId()
    const id = own[index % 2]!
    yield* send(`/api/handoffs/${id}/unlock`, buyer, { payer: buyer })
    yield* moveBack(buyer, id, days)
  }
  const demo = (yield* Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(() => desk.request("/api/sandbox").then(readJson)))).handoffId
  yield* send(`/api/handoffs/${demo}/unlock`, agent, { payer: agent })
  /** The UTC day `days` before the reference time. */
  const day = (days: number) =>
    new Date(base - days * DAY_MS).toISOString().slice(0, 10)
  return { agent, other, own, theirs, day }
})
