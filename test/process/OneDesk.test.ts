import { describe, expect, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { connect, type Socket } from "node:net"
import { BODY, filing, newAgentId } from "../support/Fixtures.ts"
import { loopbackAddress, loopbackRangeUsable, postJson, send } from "../support/Loopback.ts"
import { type DeskProcess, startDesk, tempDataDir } from "../support/Process.ts"

/** `standard` runs the default 180-per-60-seconds policy; `quick` a 5-per-3-seconds one, to wait out a Retry-After. */
class Desks extends Context.Tag("test/OneDesk/Desks")<Desks, {
  readonly standard: DeskProcess
  readonly quick: DeskProcess
}>() {}

const onPglite = (env: Record<string, string>) =>
  Effect.flatMap(tempDataDir, (dir) => startDesk({ env: { DESK_DATA_DIR: dir, ...env } }))

const DesksLive = Layer.scoped(
  Desks,
  Effect.all({
    standard: onPglite({ DESK_REQUEST_TIMEOUT_SECONDS: "2" }),
    quick: onPglite({ DESK_RATE_LIMIT: "5", DESK_RATE_WINDOW_SECONDS: "3" })
  }, { concurrency: 2 })
)

const range = (n: number) => Array.from({ length: n }, (_, i) => i)
const remainingOf = (header: unknown) => Number(/;r=(\d+);/.exec(String(header))?.[1])

/** A raw TCP exchange from `from`: `talk` writes what it likes; returns what came back and when the desk hung up. */
const exchange = (port: number, from: string, talk: (socket: Socket) => () => void) =>
  Effect.async<{ readonly text: string; readonly ms: number }, Error>((resume) => {
    const started = Date.now()
    const socket = connect({ host: "127.0.0.1", port, localAddress: from })
    const chunks: Array<Buffer> = []
    let stopTalking = () => {}
    socket.on("connect", () => (stopTalking = talk(socket)))
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("error", () => {})
    socket.on("close", () => {
      stopTalking()
      resume(Effect.succeed({ text: Buffer.concat(chunks).toString("utf8"), ms: Date.now() - started }))
    })
    return Effect.sync(() => {
      stopTalking()
      socket.destroy()
    })
  }).pipe(
    Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("the desk kept the connection open") })
  )

/** Writes `head` at once, then one piece of `drip` every 250 ms, for ever. */
const trickle = (head: string, drip: string) => (socket: Socket) => {
  socket.write(head)
  const timer = setInterval(() => socket.writable && socket.write(drip), 250)
  return () => clearInterval(timer)
}

/** Every byte percent-encoded: a spelling the router and the query decoder accept for any text. */
const encodeAll = (text: string) =>
  [...Buffer.from(text, "utf8")].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("")

const jsonOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4))

// Each test sends from its own loopback address, so one test's spent budget is not the next one's; where
// only 127.0.0.1 is usable (macOS without aliases) this is reported as skipped.
describe.skipIf(!loopbackRangeUsable)("one desk process", () => {
  layer(DesksLive, { excludeTestServices: true, timeout: "180 seconds" })("on PGlite", (it) => {
    it.effect("the 181st request in 60 seconds is a 429 with a true Retry-After, whatever X-Forwarded-For says", () =>
      Effect.gen(function*() {
        const { standard } = yield* Desks
        const from = loopbackAddress()
        const started = Date.now()
        const passed = yield* Effect.forEach(range(180), () => send(`${standard.url}/api/status`, { from }), {
          concurrency: 6
        })
        expect(passed.map((_) => _.status)).toEqual(range(180).map(() => 200))
        expect(new Set(passed.map((_) => _.headers["ratelimit-policy"]))).toEqual(new Set([`"default";q=180;w=60`]))
        // Each allowed request took one slot: the remaining counts are 179 down to 0, each once.
        expect(passed.map((_) => remainingOf(_.headers.ratelimit)).sort((a, b) => a - b)).toEqual(range(180))

        const refused = yield* send(`${standard.url}/api/status`, { from })
        const elapsed = (Date.now() - started) / 1000
        expect(refused.status).toBe(429)
        expect(refused.json).toMatchObject({ ok: false, error: "rate_limited" })
        expect(refused.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/)
        // The first of the 180 leaves the window 60 seconds after it arrived, and no sooner.
        const retryAfter = Number(refused.headers["retry-after"])
        expect(Number.isInteger(retryAfter)).toBe(true)
        expect(retryAfter).toBeGreaterThanOrEqual(Math.floor(60 - elapsed))
        expect(retryAfter).toBeLessThanOrEqual(60)

        for (
          const spoof of [
            { "x-forwarded-for": "203.0.113.9" },
            { "x-forwarded-for": `${loopbackAddress()}, 198.51.100.7` },
            { "x-real-ip": "198.51.100.4" },
            { forwarded: "for=192.0.2.60" }
          ]
        ) {
          expect((yield* send(`${standard.url}/api/status`, { from, headers: spoof })).status).toBe(429)
        }
        expect((yield* postJson(`${standard.url}/api/handoffs`, {}, { from })).status).toBe(429)
        expect((yield* send(`${standard.url}/api/status`, { from: loopbackAddress() })).status).toBe(200)
        const health = yield* send(`${standard.url}/api/health`, { from })
        expect(health.status).toBe(200)
        expect(health.headers.ratelimit).toBeUndefined()
        expect((yield* send(`${standard.url}/openapi.json`, { from })).status).toBe(200)
      }))

    it.effect("50 unlocks at once by one agent from one address are all answered, with one receipt", () =>
      Effect.gen(function*() {
        const { standard } = yield* Desks
        const from = loopbackAddress()
        const filer = newAgentId()
        const buyer = newAgentId()
        const filed = yield* postJson(`${standard.url}/api/handoffs`, filing(filer), {
          from,
          headers: { "x-agent-id": filer }
        })
        const id = filed.json.id as string
        // More than the requests one client may have in progress (7 here): the rest wait their turn, not a 429.
        const unlocks = yield* Effect.all(
          range(50).map(() =>
            postJson(`${standard.url}/api/handoffs/${id}/unlock`, { payer: buyer }, {
              from,
              fresh: true,
              headers: { "x-agent-id": buyer }
            })
          ),
          { concurrency: "unbounded" }
        )
        expect(unlocks.map((_) => _.status)).toEqual(range(50).map(() => 200))
        expect(new Set(unlocks.map((_) => _.json.receipt.receiptId)).size).toBe(1)
        expect(unlocks.filter((_) => _.json.alreadyUnlocked === false)).toHaveLength(1)
        const previews = yield* Effect.all(
          range(20).map(() => send(`${standard.url}/api/handoffs/${id}`, { from, fresh: true })),
          { concurrency: "unbounded" }
        )
        expect(previews.map((_) => [_.status, _.json.purchases])).toEqual(range(20).map(() => [200, 1]))
      }))

    it.effect("the status and llms.txt tell agents the limit the desk runs, not the default", () =>
      Effect.gen(function*() {
        const { quick, standard } = yield* Desks
        const from = loopbackAddress()
        const status = yield* send(`${quick.url}/api/status`, { from })
        expect(status.json.forAgents.rateLimit).toBe("5 JSON requests per IP per 3 seconds, then 429 with Retry-After")
        const llms = yield* send(`${quick.url}/llms.txt`, { from })
        expect(llms.text).toContain("5 JSON requests per IP per 3 seconds")
        const defaults = yield* send(`${standard.url}/api/status`, { from })
        expect(defaults.json.forAgents.rateLimit).toContain("180 JSON requests per IP per 60 seconds")
      }))

    it.effect("a retry before Retry-After is refused again; one after it passes", () =>
      Effect.gen(function*() {
        const { quick } = yield* Desks
        const from = loopbackAddress()
        const started = Date.now()
        for (const _ of range(5)) expect((yield* send(`${quick.url}/api/example`, { from })).status).toBe(200)
        const refused = yield* send(`${quick.url}/api/example`, { from })
        const elapsed = (Date.now() - started) / 1000
        expect(refused.status).toBe(429)
        expect(refused.headers["ratelimit-policy"]).toBe(`"default";q=5;w=3`)
        const retryAfter = Number(refused.headers["retry-after"])
        expect(retryAfter).toBeGreaterThanOrEqual(Math.max(1, Math.floor(3 - elapsed)))
        expect(retryAfter).toBeLessThanOrEqual(3)
        expect(refused.json.message).toContain(`retry in ${retryAfter} second`)

        const again = yield* send(`${quick.url}/api/example`, { from })
        expect(again.status).toBe(429)
        expect(Number(again.headers["retry-after"])).toBeLessThanOrEqual(retryAfter)
        yield* Effect.sleep(Duration.seconds(retryAfter))
        expect((yield* send(`${quick.url}/api/example`, { from })).status).toBe(200)
      }))

    it.effect("logs are JSON lines with the request id of every request, and no body, payment or agent id", () =>
      Effect.gen(function*() {
        const { standard } = yield* Desks
        const filer = newAgentId()
        const buyer = newAgentId()
        const secret = `sealed-canary-${randomBytes(8).toString("hex")}`
        const payment = `payment-canary-${randomBytes(8).toString("hex")}`
        const body = BODY.replace("## Evidence\n", `## Evidence\n${secret}\n`)
        const traced = `client-trace-${randomBytes(4).toString("hex")}`

        const filed = yield* postJson(`${standard.url}/api/handoffs`, filing(filer, { body }), {
          headers: { "x-agent-id": filer, "x-request-id": traced }
        })
        expect(filed.status).toBe(201)
        expect(filed.headers["x-request-id"]).toBe(traced)
        const unlocked = yield* postJson(`${standard.url}/api/handoffs/${filed.json.id}/unlock`, { payer: buyer }, {
          headers: { "x-agent-id": buyer }
        })
        expect(unlocked.status).toBe(200)
        const paidAgain = yield* postJson(`${standard.url}/api/handoffs/${filed.json.id}/unlock`, { payer: buyer }, {
          headers: { "x-agent-id": buyer, "x-payment": payment }
        })
        expect(paidAgain.status).toBeLessThan(500)
        const fetched = yield* send(`${standard.url}/api/handoffs/${filed.json.id}/body`, {
          headers: { "x-agent-id": buyer }
        })
        expect(fetched.json.body).toContain(secret)
        const receipts = yield* send(`${standard.url}/api/receipts?payer=${buyer}`)
        const agent = yield* send(`${standard.url}/api/agents/${filer}`)
        const missing = yield* send(`${standard.url}/api/handoffs/DESK-999999`)
        // The same ids with every character percent-encoded are served as well, so they must be masked as well.
        const encodedReceipts = yield* send(`${standard.url}/api/receipts?payer=${encodeAll(buyer)}`)
        expect(encodedReceipts.json.total).toBe(1)
        const encodedAgent = yield* send(`${standard.url}/api/agents/${encodeAll(filer)}`)
        expect(encodedAgent.json.id).toBe(filer)

        const sent = [filed, unlocked, paidAgain, fetched, receipts, agent, missing, encodedReceipts, encodedAgent].map(
          (_) => _.headers["x-request-id"]
        )
        expect(sent.every((id) => typeof id === "string" && id.length > 0)).toBe(true)
        expect(new Set(sent).size).toBe(sent.length)
        // The access line is written once the response is on its way.
        yield* Effect.sleep("300 millis")
        const requestLines = standard.logs().filter((line) => line.message === "Sent HTTP response")
        const annotations = requestLines.map((line) => line.annotations as Record<string, unknown>)
        expect(annotations.every((_) => typeof _.requestId === "string" && _.requestId !== "")).toBe(true)
        const logged = new Set(annotations.map((_) => _.requestId))
        expect(sent.filter((id) => !logged.has(id))).toEqual([])

        const output = standard.output()
        for (const leak of [secret, payment, buyer, filer, body.slice(0, 60), encodeAll(buyer), encodeAll(filer)]) {
          expect(output).not.toContain(leak)
        }
        for (const hidden of [buyer, filer]) expect(output.toLowerCase()).not.toContain(hidden.slice(13, -4))
        expect(output).toContain(`/api/receipts?payer=did:desk:${buyer.slice(9, 13)}…${buyer.slice(-4)}`)
      }))

    it.effect("a trickled or never-ending upload, slow headers and silence are cut off with a 408; bad HTTP is JSON too", () =>
      Effect.gen(function*() {
        const { standard } = yield* Desks
        const head = (extra: string) =>
          `POST /api/handoffs HTTP/1.1\r\nHost: desk\r\nContent-Type: application/json\r\nX-AGENT-ID: ${newAgentId()}\r\n${extra}\r\n`
        const cuts = yield* Effect.all([
          exchange(standard.port, loopbackAddress(), trickle(head("Content-Length: 100000\r\n"), " ")),
          exchange(standard.port, loopbackAddress(), trickle(head("Transfer-Encoding: chunked\r\n"), "1\r\n \r\n")),
          exchange(
            standard.port,
            loopbackAddress(),
            trickle("GET /api/status HTTP/1.1\r\nHost: desk\r\nX-Slow: ", "a")
          ),
          exchange(standard.port, loopbackAddress(), () => () => {})
        ], { concurrency: "unbounded" })
        for (const cut of cuts) {
          expect(cut.text).toMatch(/^HTTP\/1\.1 408 /)
          expect(jsonOf(cut.text)).toMatchObject({ ok: false, error: "request_timeout" })
          // The message names both of Node's clocks: the headers' and the whole request's.
          expect(jsonOf(cut.text).message).toContain("its headers within 2 seconds, all of it within 2")
          // DESK_REQUEST_TIMEOUT_SECONDS=2, checked every second.
          expect(cut.ms).toBeGreaterThanOrEqual(1_900)
          expect(cut.ms).toBeLessThan(6_000)
        }
        const malformed = yield* exchange(standard.port, loopbackAddress(), (socket) => {
          socket.write("GET /api/status HTTP/1.1\r\nHost: desk\r\nNot a header\r\n\r\n")
          return () => {}
        })
        expect(malformed.text).toMatch(/^HTTP\/1\.1 400 /)
        expect(jsonOf(malformed.text)).toMatchObject({ ok: false, error: "bad_request" })
        const longUrl = yield* send(`${standard.url}/api/discover?q=${"x".repeat(20_000)}`, { fresh: true })
        expect(longUrl.status).toBe(431)
        expect(longUrl.json).toMatchObject({ ok: false, error: "headers_too_large" })
        expect((yield* send(`${standard.url}/api/health`)).status).toBe(200)
      }))
  })
})
