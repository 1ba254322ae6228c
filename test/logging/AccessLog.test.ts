import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, FiberId } from "effect"
import { requestIdOf } from "../../src/Desk/RequestId.ts"
import { accessLine, fiberName, redactUrl } from "../../src/Http/AccessLog.ts"
import { newAgentId } from "../support/Fixtures.ts"

/** Every character percent-encoded, as a client may send any of them. */
const encodeAll = (text: string) =>
  [...Buffer.from(text, "utf8")].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("")

describe("the access log's URL", () => {
  const id = newAgentId()
  const masked = `did:desk:${id.slice(9, 13)}…${id.slice(-4)}`

  it("masks an id however it is encoded, in paths and in queries", () => {
    const spellings = [
      id,
      encodeURIComponent(id),
      encodeAll(id),
      encodeAll(id).toUpperCase(),
      `did:desk:${encodeAll(id.slice(9))}`,
      encodeURIComponent(encodeURIComponent(id)),
      id.toUpperCase()
    ]
    for (const spelled of spellings) {
      for (const url of [`/api/receipts?payer=${spelled}`, `/api/agents/${spelled}`, `/agents/${spelled}?tab=x`]) {
        const logged = redactUrl(url)
        expect(logged, url).not.toContain(id.slice(13, -4))
        expect(logged.toLowerCase(), url).toContain(masked)
      }
    }
  })

  it("masks an id's 32 hex digits alone, as a search or a filter holds them", () => {
    const hex = id.slice(9)
    for (const url of [`/api/discover?q=${hex}`, `/api/discover?vendor=x${encodeAll(hex)}`, `/api/x/${hex}.json`]) {
      const logged = redactUrl(url)
      expect(logged, url).not.toContain(hex.slice(4, -4))
      expect(logged, url).toContain(`${hex.slice(0, 4)}…${hex.slice(-4)}`)
    }
    // Longer hex (a transaction hash, 64 digits) is no id and stays.
    const hash = "ab".repeat(32)
    expect(redactUrl(`/api/discover?q=${hash}`)).toBe(`/api/discover?q=${hash}`)
  })

  it("never keeps a request id that holds an agent id or its hex", () => {
    const hex = id.slice(9)
    for (const given of [`abc-${id}`, `abc-${hex}`, hex, hex.toUpperCase()]) {
      expect(requestIdOf(given), given).not.toContain(hex.slice(4, -4).slice(0, 8))
    }
    expect(requestIdOf("trace-1234")).toBe("trace-1234")
  })

  it("keeps everything else readable, malformed escapes included", () => {
    expect(redactUrl("/api/discover?q=rate%20limit&page=2")).toBe("/api/discover?q=rate limit&page=2")
    expect(redactUrl("/api/discover?q=%ZZ%e2%82")).toBe("/api/discover?q=%ZZ%e2%82")
    expect(redactUrl("/api/handoffs/DESK-12")).toBe("/api/handoffs/DESK-12")
  })
})

describe("accessLine", () => {
  it("is the text JSON.stringify gives for the same entry, whatever the URL holds", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 128 }),
        fc.constantFrom("GET", "POST", "HEAD", "OPTIONS", "DELETE"),
        // URLs reach the log decoded: quotes, backslashes, control characters, lone surrogates and emoji included.
        fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constant("/a\"b\\c\n\u0000\ud800")),
        fc.integer({ min: 100, max: 599 }),
        fc.date({ min: new Date(0), max: new Date(8_000_000_000_000), noInvalidDate: true }),
        fc.nat(3_600_000),
        fc.string({ maxLength: 24 }),
        (requestId, method, url, status, date, httpMs, fiberId) => {
          const line = accessLine(requestId, method, url, status, date, httpMs, fiberId)
          // The line as it was built before accessLine: Logger.json's entry shape, stringified.
          const entry = {
            message: "Sent HTTP response",
            logLevel: "INFO",
            timestamp: date.toISOString(),
            annotations: { requestId, "http.method": method, "http.url": url, "http.status": status },
            spans: { http: httpMs },
            fiberId
          }
          expect(line).toBe(JSON.stringify(entry))
          expect(JSON.parse(line).annotations["http.url"]).toBe(JSON.parse(JSON.stringify(url)))
        }
      ),
      { numRuns: 2_000 }
    )
  })
})

describe("fiberName", () => {
  it("names every kind of fiber id as Logger.json does", () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.nat(), (a, b, started) => {
        const runtime = FiberId.make(a, started)
        const ids = [
          runtime,
          FiberId.none,
          FiberId.composite(runtime, FiberId.make(b, started)),
          FiberId.composite(FiberId.none, runtime)
        ]
        for (const id of ids) expect(fiberName(id)).toBe(FiberId.threadName(id))
      })
    )
    expect(fiberName(FiberId.make(17, 0))).toBe("#17")
  })
})
