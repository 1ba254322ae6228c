import { describe, expect, it } from "@effect/vitest"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type FailedStart, startExpectingExit } from "../support/Process.ts"
import { DATABASE_URL } from "../support/Storage.ts"

const expectOneLine = (result: FailedStart, reason: RegExp) => {
  expect(result.code, result.stderr).toBe(1)
  const lines = result.stderr.trim().split("\n")
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(/^handoff-desk: cannot start: \S/)
  expect(lines[0]).toMatch(reason)
}

/** Two cases at a time: each start spends seconds loading TypeScript, and the machine has two cores. */
const expectAll = async (cases: ReadonlyArray<readonly [Record<string, string>, RegExp]>) => {
  const results: Array<FailedStart> = []
  for (let i = 0; i < cases.length; i += 2) {
    results.push(...await Promise.all(cases.slice(i, i + 2).map(([env]) => startExpectingExit(env))))
  }
  results.forEach((result, i) => expectOneLine(result, cases[i]![1]))
}

describe("a desk that cannot start says why in one line and exits 1", () => {
  it("bad configuration", async () => {
    await expectAll([
      [{ PORT: "abc" }, /PORT/],
      [{ PORT: "0", DESK_PUBLIC_URL: "notaurl" }, /DESK_PUBLIC_URL/],
      // A URL, but none a link on a page or in a listing could follow.
      [{ PORT: "0", DESK_PUBLIC_URL: "ftp://desk.example" }, /DESK_PUBLIC_URL must be an http:\/\/ or https:\/\//],
      // Redis' client said only "Invalid URL".
      [{ REDIS_URL: "::not-a-url::" }, /REDIS_URL must be a redis:\/\//],
      [{ REDIS_URL: "redis://127.0.0.1:abc" }, /REDIS_URL must be a redis:\/\//],
      // The message named no variable ("Invalid data at : ...").
      [{ DESK_TRUST_PROXY: "10.0.0.1, garbage" }, /DESK_TRUST_PROXY.*"garbage" is not an IP address/]
    ])
  }, 120_000)

  it("a port already in use; a HOST that does not resolve or is not this machine's", async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    try {
      const port = (taken.address() as { port: number }).port
      await expectAll([
        [{ PORT: String(port) }, /PORT .*EADDRINUSE/],
        [{ HOST: "999.1.1.1" }, /^handoff-desk: cannot start: HOST 999\.1\.1\.1 does not resolve/],
        [{ HOST: "192.0.2.1" }, /HOST 192\.0\.2\.1 is not an address of this machine/]
      ])
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  }, 180_000)

  it("chain settings that cannot work: checked with or without a chain", async () => {
    await expectAll([
      [{ DESK_PAYMENT_REQUIRED: "true" }, /DESK_PAYMENT_REQUIRED=true needs a chain.*DESK_CHAIN_RPC_URL/],
      [{ DESK_NETWORK: "foo" }, /DESK_NETWORK.*got "foo"/],
      [{ DESK_NETWORK: "foo", DESK_CHAIN_RPC_URL: "http://127.0.0.1:1" }, /DESK_NETWORK.*got "foo"/],
      [{ DESK_WALLET_PRIVATE_KEY: "0x1234" }, /DESK_WALLET_PRIVATE_KEY must be 0x/],
      [{ DESK_WALLET_PRIVATE_KEY: `0x${"0".repeat(64)}` }, /DESK_WALLET_PRIVATE_KEY must be 0x/],
      [
        { DESK_WALLET_PRIVATE_KEY: "not-a-key", DESK_CHAIN_RPC_URL: "http://127.0.0.1:1" },
        /DESK_WALLET_PRIVATE_KEY must be 0x/
      ],
      // Without a chain these did nothing, typo or not: the desk started and sold for ledger receipts.
      [{ DESK_PAY_TO: "0x12" }, /^handoff-desk: cannot start: DESK_PAY_TO is set but the desk has no chain.*RPC_URL/],
      [{ DESK_FACILITATOR_URL: "notaurl" }, /DESK_FACILITATOR_URL is set but the desk has no chain/],
      [{ DESK_PAY_TO: "0x12", DESK_CHAIN_RPC_URL: "http://127.0.0.1:1" }, /DESK_PAY_TO/]
    ])
  }, 300_000)

  it("settings out of range: refused before the store opens, naming the variable", async () => {
    const dir = mkdtempSync(join(tmpdir(), "handoff-desk-"))
    try {
      const fresh = join(dir, "never-created")
      const chain = { DESK_CHAIN_RPC_URL: "http://127.0.0.1:1" }
      await expectAll([
        // A negative interval spun the payout loop without a pause.
        [{ DESK_OUTBOX_INTERVAL_MS: "-5" }, /DESK_OUTBOX_INTERVAL_MS must be a whole number of milliseconds/],
        [{ DESK_PAYOUT_RETRY_MS: "-5" }, /DESK_PAYOUT_RETRY_MS/],
        [{ DESK_PUBLIC_URL: "http://desk.example/x?a=1#f" }, /DESK_PUBLIC_URL must be .* no query, fragment/],
        // Read only once the store is open, before: the embedded database was created and the exit took 25 s.
        [{ DESK_MIN_FREE_DISK_MB: "-1", DESK_DATA_DIR: fresh }, /DESK_MIN_FREE_DISK_MB must be 0 or more/],
        [{ DESK_STATEMENT_TIMEOUT_MS: "abc", DESK_DATA_DIR: fresh }, /DESK_STATEMENT_TIMEOUT_MS/],
        [{ DESK_PREVIEW_CACHE: "-1", DESK_DATA_DIR: fresh }, /DESK_PREVIEW_CACHE must be 0 or more/],
        // A payment timeout within the 30 s a new payment must still run sold nothing; a zero chain timeout was
        // blamed on the RPC URL; an explorer that is no URL went into every receipt's links.
        [{ ...chain, DESK_PAYMENT_TIMEOUT_SECONDS: "25" }, /DESK_PAYMENT_TIMEOUT_SECONDS must be .* between 60 and/],
        [{ ...chain, DESK_CHAIN_TIMEOUT_MS: "0" }, /DESK_CHAIN_TIMEOUT_MS must be/],
        [{ ...chain, DESK_CONFIRM_TIMEOUT_MS: "-1" }, /DESK_CONFIRM_TIMEOUT_MS must be/],
        [{ ...chain, DESK_EXPLORER_URL: "notaurl" }, /DESK_EXPLORER_URL must be empty or an http/]
      ])
      expect(existsSync(fresh)).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)

  it("a DESK_DATA_DIR that is a file exits instead of hanging", async () => {
    const dir = mkdtempSync(join(tmpdir(), "handoff-desk-"))
    try {
      const file = join(dir, "not-a-directory")
      writeFileSync(file, "x")
      const result = await startExpectingExit({ DESK_DATA_DIR: file })
      expectOneLine(result, /DESK_DATA_DIR .*not-a-directory.* is a file, not a directory/)
      expect(result.ms).toBeLessThan(60_000)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it("a store that fails while requests wait for it: they are answered 503 and the desk still exits", async () => {
    // Accepts and says nothing: the store's first connection waits until its timeout, while the port listens.
    const sockets = new Set<Socket>()
    const silent = createServer((socket) => sockets.add(socket))
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    try {
      const port = (silent.address() as { port: number }).port
      const result = await startExpectingExit(
        { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/desk` },
        { poll: "/api/health" }
      )
      // Before: the held request was never answered, so the server's close never ended and the desk hung,
      // silent, until killed (code null at 60 s).
      expectOneLine(result, /DATABASE_URL/)
      expect(result.polled).toContain(503)
      expect(result.polled.filter((status) => status !== 503 && status !== 0)).toEqual([])
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  }, 120_000)

  describe.skipIf(DATABASE_URL === undefined)("PostgreSQL", () => {
    it("says which case it is: port refused, database missing, user refused, host unknown, malformed URL", async () => {
      const base = new URL(DATABASE_URL!)
      const withUrl = (change: (url: URL) => void) => {
        const url = new URL(base)
        change(url)
        return { DATABASE_URL: url.toString() }
      }
      const password = `pg-canary-${Date.now()}`
      await expectAll([
        [
          withUrl((url) => (url.port = "1")),
          /DATABASE_URL: nothing accepts connections at .*:1 \(connection refused\)/
        ],
        [
          withUrl((url) => (url.pathname = "/no_such_desk_db")),
          /database "no_such_desk_db" does not exist.*CREATE DATABASE no_such_desk_db;/
        ],
        [
          withUrl((url) => {
            url.username = "no_such_desk_user"
            url.password = password
          }),
          /DATABASE_URL: PostgreSQL at .* refused user "no_such_desk_user" \(authentication failed/
        ],
        [
          withUrl((url) => (url.hostname = "no-such-host.invalid")),
          /DATABASE_URL: the host no-such-host\.invalid does not resolve/
        ],
        [{ DATABASE_URL: "localhost:5432/desk" }, /DATABASE_URL is not a PostgreSQL URL/]
      ])
      // The password never reaches the line.
      const refused = await startExpectingExit(withUrl((url) => {
        url.username = "no_such_desk_user"
        url.password = password
      }))
      expect(refused.stderr).not.toContain(password)
    }, 300_000)
  })
})
