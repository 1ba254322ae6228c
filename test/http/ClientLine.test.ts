import { Effect, Exit, Redacted, Scope } from "effect"
import { connect, type Socket } from "node:net"
import { describe, expect, it } from "vitest"
import * as RedisRateStore from "../../adapters/ratelimit/Redis.ts"
import { normalizeIp, rateKeyOf } from "../../src/Http/ClientIp.ts"
import { delayProxy } from "../support/DelayProxy.ts"
import { harness, sleep, slowLimiter } from "../support/EdgeHarness.ts"
import { redisUp } from "../support/Redis.ts"

/**
 * A client's requests past its concurrency cap (src/Http/ClientConcurrency.ts): POSTs wait in its line at the edge,
 * reads wait their turn before the app (src/Http/Admission.ts), and nothing is ever left waiting for a slot that no
 * one will hand over, or holding a place for a client that left.
 */

const JSON_POST = { method: "POST", headers: { "content-type": "application/json" }, body: "{}" } as const

/** A raw POST whose client hangs up after `closeAfterMs`; with `trickle`, its body never finishes. */
const rawPost = (port: number, from: string, closeAfterMs: number, trickle = false) =>
  new Promise<Socket>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.write(
        `POST /api/post HTTP/1.1\r\nHost: desk\r\nX-Forwarded-For: ${from}\r\nContent-Type: application/json\r\n` +
          (trickle ? `Content-Length: 1000\r\n\r\n{"a":` : `Content-Length: 2\r\n\r\n{}`)
      )
      resolve(socket)
    })
    socket.on("error", () => {})
    if (closeAfterMs > 0) setTimeout(() => socket.destroy(), closeAfterMs)
  })

describe("a client's line", () => {
  it("a rate store that answers late (as Redis does) strands no one: a slot freed meanwhile is taken", async () => {
    const desk = await harness({ cap: 1, line: 10, limiter: slowLimiter(100) })
    try {
      const from = "198.51.100.20"
      const first = desk.send("/api/post", from, JSON_POST)
      await sleep(30)
      const second = desk.send("/api/post", from, { ...JSON_POST, timeoutMs: 3000 })
      expect([(await first).status, (await second).status]).toEqual([200, 200])
    } finally {
      await desk.close()
    }
  })

  it.skipIf(!redisUp)("the same with the Redis store behind a 50 ms link", async () => {
    const scope = Effect.runSync(Scope.make())
    const proxy = await Effect.runPromise(Scope.extend(delayProxy({ host: "127.0.0.1", port: 6379 }, 0), scope))
    const limiter = RedisRateStore.layer({ limit: 1_000_000, windowSeconds: 60 }, {
      url: Redacted.make(`redis://127.0.0.1:${proxy.port}`),
      prefix: `test:client-line:${Date.now()}:`
    })
    const desk = await harness({ cap: 1, line: 10, limiter })
    try {
      proxy.setDelay(50)
      const from = "198.51.100.22"
      const first = desk.send("/api/post", from, JSON_POST)
      await sleep(20)
      const second = desk.send("/api/post", from, { ...JSON_POST, timeoutMs: 3000 })
      expect([(await first).status, (await second).status]).toEqual([200, 200])
    } finally {
      await desk.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("drops a waiter whose client hung up: a live request is not refused for a line full of gone ones", async () => {
    const desk = await harness({ cap: 1, line: 2 })
    try {
      const from = "192.0.2.80"
      const holder = desk.send("/api/sleep", from, JSON_POST)
      await sleep(30)
      await rawPost(desk.port, from, 50)
      await rawPost(desk.port, from, 50)
      await sleep(300)
      const live = await desk.send("/api/post", from, { ...JSON_POST, timeoutMs: 3000 })
      expect({ status: live.status, abandoned: desk.concurrency.counts.abandoned }).toEqual({
        status: 200,
        abandoned: 2
      })
      expect((await holder).status).toBe(200)
    } finally {
      await desk.close()
    }
  })

  it("a 429 from the rate limiter for a request past the cap takes no place and no slot", async () => {
    const desk = await harness({ cap: 1, line: 5, policy: { limit: 2, windowSeconds: 60 } })
    try {
      const from = "192.0.2.78"
      const holder = desk.send("/api/sleep", from, JSON_POST)
      await sleep(30)
      const waiting = desk.send("/api/post", from, JSON_POST)
      await sleep(30)
      expect((await desk.send("/api/post", from, JSON_POST)).status).toBe(429)
      expect([(await holder).status, (await waiting).status]).toEqual([200, 200])
      expect(desk.concurrency.freeSlots(from)).toBe(1)
      expect(desk.concurrency.inner.hasRoom(from)).toBe(true)
    } finally {
      await desk.close()
    }
  })

  it("reads past the cap wait before the app, not in the line; behind admission all are answered", async () => {
    const bare = await harness({ cap: 2 })
    const admitted = await harness({ cap: 2, active: 8 })
    try {
      for (const [desk, expected] of [[bare, 429], [admitted, 200]] as const) {
        const from = "198.51.100.30"
        const reads = [1, 2, 3, 4, 5].map(() => desk.send("/api/sleep?ms=200", from, { timeoutMs: 5000 }))
        const statuses = (await Promise.all(reads)).map((_) => _.status)
        expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(2)
        expect(statuses.every((status) => status === 200 || status === expected)).toBe(true)
        if (expected === 200) expect(statuses).toEqual([200, 200, 200, 200, 200])
        expect(desk.concurrency.counts.joined).toBe(0)
      }
    } finally {
      await bare.close()
      await admitted.close()
    }
  })

  it("previews by id past the cap wait in the client's line even behind admission (they take no turn)", async () => {
    const desk = await harness({ cap: 2, active: 8 })
    try {
      const from = "198.51.100.31"
      // Held long enough that all five have arrived before the first two end, however slow the machine.
      const reads = [1, 2, 3, 4, 5].map((n) => desk.send(`/api/handoffs/DESK-${n}?ms=600`, from, { timeoutMs: 5000 }))
      expect((await Promise.all(reads)).map((_) => _.status)).toEqual([200, 200, 200, 200, 200])
      const { counts, freeSlots } = desk.concurrency
      expect(counts.joined).toBe(3)
      expect(freeSlots(rateKeyOf(normalizeIp(from)!))).toBe(2)
    } finally {
      await desk.close()
    }
  })

  it("clients whose POSTs hold their slots cannot take every read turn from another client", async () => {
    // 4 turns, 2 per client (as DESK_ACTIVE_REQUESTS=20 and DESK_CLIENT_CONCURRENCY=7 with 3 attacking clients).
    const desk = await harness({ cap: 2, active: 4, requestSeconds: 20 })
    const sockets: Array<Socket> = []
    try {
      for (const attacker of ["203.0.113.1", "203.0.113.2"]) {
        for (let i = 0; i < 2; i++) sockets.push(await rawPost(desk.port, attacker, 0, true))
      }
      await sleep(200)
      const attackerReads = []
      for (const attacker of ["203.0.113.1", "203.0.113.2"]) {
        for (let i = 0; i < 4; i++) attackerReads.push(desk.send("/api/quick", attacker, { timeoutMs: 15_000 }))
      }
      await sleep(300)
      const victim = await desk.send("/api/quick", "198.51.100.99", { timeoutMs: 3000 })
      expect([victim.status, victim.ms < 1000]).toEqual([200, true])
    } finally {
      for (const socket of sockets) socket.destroy()
      await sleep(100)
      await desk.close()
    }
  })

  it("a POST with an empty query parameter is answered (its body is read once)", async () => {
    const desk = await harness({ cap: 2 })
    try {
      for (const path of ["/api/post?x=", "/api/post?flag", "/api/post?a=1&b="]) {
        const answer = await desk.send(path, "192.0.2.90", { ...JSON_POST, timeoutMs: 3000 })
        expect([path, answer.status]).toEqual([path, 200])
      }
      expect(desk.concurrency.freeSlots("192.0.2.90")).toBe(2)
    } finally {
      await desk.close()
    }
  })

  for (const withAdmission of [false, true]) {
    it(
      `gives every slot back after a storm of every kind of request${withAdmission ? " (behind admission)" : ""}`,
      async () => {
        const cap = 2
        const desk = await harness({
          cap,
          line: 6,
          policy: { limit: 40, windowSeconds: 60 },
          ...(withAdmission ? { active: 5 } : {})
        })
        const pick = <A>(xs: ReadonlyArray<A>, i: number) => xs[i % xs.length]!
        try {
          const clients = ["192.0.2.50", "192.0.2.51", "192.0.2.52", "2001:db8:1::1", "2001:db8:1::2"]
          const json = { "content-type": "application/json" }
          const kinds: Array<(from: string, i: number) => Promise<unknown>> = [
            (from) => desk.send("/api/sleep?ms=30", from),
            (from) => desk.send("/api/sleep?ms=30", from, { method: "HEAD" }),
            (from) => desk.send("/api/broken", from),
            (from, i) => desk.send(`/api/handoffs/DESK-${i}`, from, { signal: AbortSignal.timeout(5 + (i % 30) * 5) }),
            (from) => desk.send("/api/quick?q=&tag", from),
            (from) =>
              desk.send("/api/post", from, {
                method: "POST",
                headers: { ...json, "content-length": String(2 * 1024 * 1024) },
                body: "x"
              }),
            (from) =>
              desk.send("/api/post", from, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" }),
            (from) => desk.send("/api/post", from, { method: "POST", headers: json, body: "{" }),
            (from) => desk.send("/api/sleep", from, JSON_POST),
            (from, i) => desk.send("/api/sleep?ms=200", from, { signal: AbortSignal.timeout(5 + (i % 40) * 5) }),
            (from, i) => desk.send("/api/sleep", from, { ...JSON_POST, signal: AbortSignal.timeout(1 + (i % 7)) })
          ]
          const all: Array<Promise<unknown>> = []
          for (let round = 0; round < 4; round++) {
            for (let i = 0; i < 120; i++) all.push(pick(kinds, i * 7 + round)(pick(clients, i + round), i))
            await sleep(15)
          }
          await Promise.all(all)
          await sleep(800)
          const { counts, freeSlots } = desk.concurrency
          // Every place taken in a line ended in a slot or was given up.
          expect(counts.left - counts.entered + counts.abandoned).toBe(counts.joined)
          expect(counts.joined).toBeGreaterThan(0)
          expect(clients.map((c) => freeSlots(rateKeyOf(normalizeIp(c)!)))).toEqual(clients.map(() => cap))
        } finally {
          await desk.close()
        }
      },
      30_000
    )
  }
})
