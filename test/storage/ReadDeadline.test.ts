import { describe, expect, it } from "@effect/vitest"
import pg from "pg"
import { readDeadlineClient } from "../../adapters/storage/ReadDeadline.ts"
import { DATABASE_URL } from "../support/Storage.ts"

const DEADLINE_MS = 400

/** A connection (no statement timeout of its own) whose statements must be answered within DEADLINE_MS. */
const connect = async () => {
  const Client = readDeadlineClient(pg.Client, DEADLINE_MS)
  const client = new Client({ connectionString: DATABASE_URL })
  const errors: Array<unknown> = []
  client.on("error", (error) => errors.push(error))
  await client.connect()
  return { client, errors }
}

const sleepFor = (client: pg.Client, seconds: number) =>
  client.query(`SELECT pg_sleep(${seconds})`).then(() => "answered", (error: { code?: string }) => error.code)

// Needs DATABASE_URL (a real server to keep quiet with pg_sleep); skipped without it.
describe.skipIf(DATABASE_URL === undefined)("a statement's read deadline", () => {
  it("a statement not answered in time fails with ETIMEDOUT and closes its connection, queued ones with it", async () => {
    const { client, errors } = await connect()
    const started = Date.now()
    const [late, queued] = await Promise.all([sleepFor(client, 3), sleepFor(client, 0)])
    expect([late, Date.now() - started < 2_000]).toEqual(["ETIMEDOUT", true])
    expect(queued).not.toBe("answered")
    expect(await sleepFor(client, 0)).not.toBe("answered")
    expect(errors.map((_) => (_ as { code?: string }).code)).toContain("ETIMEDOUT")
    await client.end().catch(() => undefined)
  })

  it("answered in time, a statement is untouched and the connection stays", async () => {
    const { client, errors } = await connect()
    expect(await sleepFor(client, 0.1)).toBe("answered")
    expect(await sleepFor(client, 0.1)).toBe("answered")
    expect(errors).toEqual([])
    await client.end()
  })

  it("a transaction that lifts its statement timeout has no deadline until it ends; then the deadline is back", async () => {
    const { client, errors } = await connect()
    await client.query("BEGIN")
    await client.query("SET LOCAL statement_timeout = 0")
    // As a migration or ANALYZE on a large catalog: longer than the deadline.
    expect(await sleepFor(client, 0.8)).toBe("answered")
    await client.query("COMMIT")
    expect(errors).toEqual([])
    expect(await sleepFor(client, 0.8)).toBe("ETIMEDOUT")
    await client.end().catch(() => undefined)
  })

  it("a lift undone by ROLLBACK TO SAVEPOINT, or made outside a transaction, lifts no deadline", async () => {
    const { client } = await connect()
    await client.query("BEGIN")
    await client.query("SAVEPOINT s")
    await client.query("SET LOCAL statement_timeout = 0")
    await client.query("ROLLBACK TO SAVEPOINT s")
    expect(await sleepFor(client, 0.8)).toBe("ETIMEDOUT")
    const other = await connect()
    // PostgreSQL ignores SET LOCAL outside a transaction (a warning); so does the deadline.
    await other.client.query("SET LOCAL statement_timeout = 0")
    expect(await sleepFor(other.client, 0.8)).toBe("ETIMEDOUT")
    await Promise.all([client, other.client].map((_) => _.end().catch(() => undefined)))
  })

  it("END, ABORT and an ending with a semicolon bring the deadline back", async () => {
    for (const end of ["END", "ABORT", "COMMIT;", "rollback ;"]) {
      const { client } = await connect()
      await client.query("BEGIN")
      await client.query("SET LOCAL statement_timeout = 0")
      await client.query(end)
      expect(await sleepFor(client, 0.8), end).toBe("ETIMEDOUT")
      await client.end().catch(() => undefined)
    }
  })

  it("statements queued on one connection each start their deadline when the one before is answered", async () => {
    const { client, errors } = await connect()
    // 250 ms each against 400 ms: the second one's time in line is not counted.
    expect(await Promise.all([sleepFor(client, 0.25), sleepFor(client, 0.25)])).toEqual(["answered", "answered"])
    expect(errors).toEqual([])
    await client.end()
  })

  it("a submittable runs unbounded, as long as it takes, and the connection goes on", async () => {
    const { client, errors } = await connect()
    // node-postgres' own Query, submitted as pg-cursor and pg-query-stream are: it answers by events.
    const submitted = client.query(new pg.Query("SELECT pg_sleep(0.6) AS slept"))
    const rows = await new Promise<number>((resolve, reject) => {
      let count = 0
      submitted.on("row", () => count++)
      submitted.on("end", () => resolve(count))
      submitted.on("error", reject)
    })
    expect(rows).toBe(1)
    expect(await sleepFor(client, 0.1)).toBe("answered")
    expect(errors).toEqual([])
    await client.end()
  })

  it("a rolled-back transaction that lifted it gets the deadline back too", async () => {
    const { client } = await connect()
    await client.query("BEGIN")
    await client.query("SET LOCAL statement_timeout = 0")
    await client.query("ROLLBACK")
    expect(await sleepFor(client, 0.8)).toBe("ETIMEDOUT")
    await client.end().catch(() => undefined)
  })
})
