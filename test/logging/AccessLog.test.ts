import { describe, expect, it } from "@effect/vitest"
import { redactUrl } from "../../src/Http/AccessLog.ts"
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

  it("keeps everything else readable, malformed escapes included", () => {
    expect(redactUrl("/api/discover?q=rate%20limit&page=2")).toBe("/api/discover?q=rate limit&page=2")
    expect(redactUrl("/api/discover?q=%ZZ%e2%82")).toBe("/api/discover?q=%ZZ%e2%82")
    expect(redactUrl("/api/handoffs/DESK-12")).toBe("/api/handoffs/DESK-12")
  })
})
