import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { prefersJson } from "../../src/Pages/Negotiate.ts"
import { agentWithHistory } from "../support/AgentHistory.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { BODY, filing, newAgentId } from "../support/Fixtures.ts"

const CHROMIUM = "/usr/bin/chromium"
const SEALED_LINE = "Pinning redis-rb to 4.x"
const HOSTILE = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> "quoted" & 'single'`

/** The browser globals the page scripts read: the project's tsconfig has no DOM library. */
interface InPage {
  readonly window: { readonly innerWidth: number; readonly __pwned?: number }
  readonly document: {
    readonly documentElement: { readonly scrollWidth: number }
    readonly activeElement: { readonly textContent: string | null } | null
    readonly body: unknown
    querySelector(selector: string): unknown
    querySelectorAll(selector: string): Iterable<{ readonly scrollWidth: number; readonly clientWidth: number }>
  }
  getComputedStyle(element: unknown): { readonly color: string; readonly backgroundColor: string }
}

/** Headless Chromium with the machine's flags and a fresh profile, closed (and its profile removed) with the scope. */
const chromiumWith = (viewport: { readonly width: number; readonly height: number }) =>
  Effect.gen(function*() {
    const profile = mkdtempSync(join(tmpdir(), "desk-chromium-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(profile, { recursive: true, force: true })))
    return yield* Effect.acquireRelease(
      Effect.promise(() =>
        chromium.launchPersistentContext(profile, {
          executablePath: CHROMIUM,
          headless: true,
          viewport,
          args: [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync"
          ]
        })
      ),
      (context) => Effect.promise(() => context.close())
    )
  })

/** Screenshots of the pages, for a person to look at (git-ignored). */
const SHOTS = fileURLToPath(new URL("../../.tmp/screenshots/", import.meta.url))

const file = (overrides: Record<string, unknown>) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(() => {
      const filer = newAgentId()
      return desk.request("/api/handoffs", { json: filing(filer, overrides), agent: filer }).then(readJson)
    }))

const get = (path: string, accept?: string) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await fetch(`${desk.url}${path}`, accept === undefined ? {} : { headers: { accept } })
      return {
        status: response.status,
        type: response.headers.get("content-type"),
        vary: response.headers.get("vary"),
        headers: response.headers,
        text: await response.text()
      }
    }))

describe("content negotiation", () => {
  it("gives JSON only to clients that prefer it over HTML", () => {
    expect(prefersJson(undefined)).toBe(false)
    expect(prefersJson("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")).toBe(false)
    expect(prefersJson("*/*")).toBe(false)
    expect(prefersJson("application/json")).toBe(true)
    expect(prefersJson("application/json, text/plain, */*")).toBe(true)
    expect(prefersJson("text/html;q=0.5, application/json")).toBe(true)
    expect(prefersJson("text/html, application/json;q=0.9")).toBe(false)
  })
})

describe("pages for people", () => {
  it.layer(deskOn(Pglite.layer({})), { timeout: 120_000 })((it) => {
    it.effect("serve HTML to browsers and JSON to JSON clients, on the same URLs", () =>
      Effect.gen(function*() {
        const filed = yield* file({ title: "Quokka cache stampede: the lock that held" })
        const html = yield* get(`/h/${filed.id}`, "text/html")
        expect(html).toMatchObject({ status: 200, type: "text/html; charset=utf-8", vary: "Accept" })
        expect(html.text).toContain("Quokka cache stampede: the lock that held")
        expect(html.text).not.toContain(SEALED_LINE)
        expect(BODY).toContain(SEALED_LINE)
        // This desk has no chain: the price is not said to be paid in USDC.
        expect(html.text).toContain(
          "$0.50, once per agent identity, written as a ledger receipt: no USDC moves on this desk"
        )

        const json = yield* get(`/h/${filed.id}`, "application/json")
        expect(json).toMatchObject({ status: 200, type: "application/json", vary: "Accept" })
        expect(JSON.parse(json.text)).toEqual(
          JSON.parse((yield* get(`/api/handoffs/${filed.id}`, "application/json")).text)
        )

        const listing = JSON.parse((yield* get("/?q=quokka", "application/json")).text)
        expect(listing).toMatchObject({ total: 1, page: 1, sort: "relevance" })
        expect(listing.items[0].id).toBe(filed.id)
        expect(JSON.stringify(listing)).not.toContain(SEALED_LINE)
      }))

    it.effect("answer an unknown id with 404 in the form asked for, and escape every text", () =>
      Effect.gen(function*() {
        const hostile = yield* file({ title: `Quoll ${HOSTILE}`, teaser: `Teaser ${HOSTILE}`, tags: ["xss"] })
        for (const path of [`/h/${hostile.id}`, "/?q=quoll", "/?tag=xss"]) {
          const page = yield* get(path)
          expect(page.status, path).toBe(200)
          expect(page.text, path).not.toContain("<script>window")
          expect(page.text, path).not.toContain("<img src=x")
          expect(page.text, path).toContain("&lt;script&gt;window.__pwned = 1&lt;/script&gt;")
          expect(page.text, path).toContain("&quot;quoted&quot; &amp; &#39;single&#39;")
        }
        const missingHtml = yield* get("/h/%3Cb%3Eno%3C%2Fb%3E", "text/html")
        expect(missingHtml).toMatchObject({ status: 404, type: "text/html; charset=utf-8" })
        expect(missingHtml.text).toContain("&lt;b&gt;no&lt;/b&gt;")
        const missingJson = yield* get("/h/DESK-999999999", "application/json")
        expect(missingJson.status).toBe(404)
        expect(JSON.parse(missingJson.text)).toMatchObject({ ok: false, error: "not_found" })
      }))

    it.effect("send no script, frame or referrer to a page, and keep an agent's page out of shared caches", () =>
      Effect.gen(function*() {
        const filed = yield* file({ title: "Dunnart pages under a content policy" })
        const { agent } = yield* agentWithHistory
        const pages = [
          "/",
          "/?sort=best",
          `/h/${filed.id}`,
          "/h/DESK-999999999",
          `/agents/${agent}`,
          `/agents/${newAgentId()}`
        ]
        for (const path of pages) {
          const page = yield* get(path)
          expect(page.type, path).toBe("text/html; charset=utf-8")
          expect(page.headers.get("content-security-policy"), path).toBe(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
          )
          expect(page.headers.get("x-content-type-options"), path).toBe("nosniff")
          expect(page.headers.get("referrer-policy"), path).toBe("no-referrer")
        }
        for (const accept of ["text/html", "application/json"]) {
          const page = yield* get(`/agents/${agent}`, accept)
          expect(page.status, accept).toBe(200)
          expect(page.headers.get("cache-control"), accept).toBe("private, no-store")
        }
        expect((yield* get(`/h/${filed.id}`)).headers.get("cache-control")).toBeNull()
      }))

    it.effect("say on a handoff's page what its preview says: work time, saving, why pay, origin, an unproven claim", () =>
      Effect.gen(function*() {
        const plain = yield* file({
          title: "Echidna page facts",
          minutes: 120,
          whyPay: `Saves two days <b>really</b>`,
          provenance: { vendor: "Anthropic", model: "claude", agentName: "tester", tools: [] }
        })
        const page = (yield* get(`/h/${plain.id}`)).text
        expect(page).toContain("<dt>Work time</dt><dd>120 minutes (the filer's claim)</dd>")
        expect(page).toContain("<dt>Duration</dt><dd>not given</dd>")
        expect(page).toContain(
          "<dt>Claimed saving</dt><dd>$39.50 (the estimate less the price, so unverified too)</dd>"
        )
        expect(page).toContain("<p>Saves two days &lt;b&gt;really&lt;/b&gt;</p>")
        expect(page).toContain("<dt>Origin</dt><dd>filed by an agent</dd>")
        expect(page).not.toContain("Unproven claim")
        expect(plain.qualityFlags).toEqual([])

        const timed = (yield* get(`/h/${(yield* file({ title: "Echidna timed" })).id}`)).text
        expect(timed).toContain("<dt>Duration</dt><dd>30 minutes</dd>")
        expect(timed).toContain("<dt>Work time</dt><dd>not given</dd>")

        // Left out by the filer (the README's own filing): a placeholder, not an empty paragraph or row.
        const sparse = yield* file({
          title: "Echidna sparse",
          whyPay: undefined,
          provenance: { vendor: "Anthropic", model: "claude", tools: [] }
        })
        expect(sparse.whyPay).toBe("")
        const bare = (yield* get(`/h/${sparse.id}`)).text
        expect(bare).not.toContain("<p></p>")
        expect(bare).not.toContain("<dd></dd>")
        expect(bare).toContain("The filer gave no reason; read the claims below.")
        expect(bare).toContain(`<dt>Agent</dt><dd><span class="muted">not given</span></dd>`)

        const extreme = yield* file({ title: "Echidna extreme claim", priceUsd: 0.01, reconstructUsd: 50 })
        expect(extreme.qualityFlags).toEqual(["unproven_extreme_ratio"])
        expect((yield* get(`/h/${extreme.id}`)).text).toContain(
          "<strong>Unproven claim:</strong> the filer values this work at 1,000 times its price or more"
        )
      }))

    it.effect("isolate a filer's name, so a right-to-left override in it turns nothing written after it", () =>
      Effect.gen(function*() {
        const filed = yield* file({ title: "Bilby bidi", filer: "good-agent\u202E", tags: ["bilby-bidi"] })
        for (const path of [`/h/${filed.id}`, "/?tag=bilby-bidi"]) {
          expect((yield* get(path)).text, path).toContain(`"><bdi>good-agent\u202E</bdi></a>`)
        }
      }))

    it.effect("decode their query like GET /api/discover: bad input is a 422 page (JSON for JSON clients), never a 500", () =>
      Effect.gen(function*() {
        for (
          const query of [
            "q=%00",
            "tag=%00",
            "sort=best",
            "page=zero",
            "page=0",
            "maxPrice=1.0000001",
            `q=${"a".repeat(300)}`
          ]
        ) {
          const page = yield* get(`/?${query}`)
          expect(page.status, query).toBe(422)
          expect(page.type, query).toBe("text/html; charset=utf-8")
          expect(page.text, query).toContain("This search cannot run")
          const json = yield* get(`/?${query}`, "application/json")
          const rest = yield* get(`/api/discover?${query}`, "application/json")
          expect(json.status, query).toBe(422)
          expect(JSON.parse(json.text), query).toEqual(JSON.parse(rest.text))
        }
        const best = yield* get("/?sort=best")
        expect(best.text).toContain("must be one of &quot;relevance&quot;, &quot;recent&quot;")
        // A form sends its empty fields: they mean no filter.
        expect((yield* get("/?q=&tag=&sort=&maxPrice=")).status).toBe(200)
      }))

    it.effect("filter by tag, sort and highest price, keep the filters on every page link, and show dollars and cents", () =>
      Effect.gen(function*() {
        const tag = `numbat-${Date.now().toString(36)}`
        for (const priceUsd of [1.2, 0.3, 0.000001, 2, 0.75]) {
          yield* file({ title: `Numbat at ${priceUsd}`, tags: [tag], priceUsd, reconstructUsd: 100 })
        }
        const page = yield* get(`/?tag=${tag}&sort=price&maxPrice=1.5&limit=2`)
        expect(page.status).toBe(200)
        const titles = [...page.text.matchAll(/<h3><a href="\/h\/DESK-\d+">([^<]+)<\/a><\/h3>/g)].map((_) => _[1])
        expect(titles).toEqual(["Numbat at 0.000001", "Numbat at 0.3"])
        expect(page.text).toContain("$0.000001 to unlock")
        expect(page.text).toContain("$0.30 to unlock")
        expect(page.text).toContain(`4 handoffs tagged ${tag} at most $1.50`)
        expect(page.text).toContain(
          `href="/?tag=${tag}&amp;sort=price&amp;maxPrice=1.5&amp;limit=2&amp;page=2" rel="next"`
        )
        const second = yield* get(`/?tag=${tag}&sort=price&maxPrice=1.5&limit=2&page=2`)
        expect(second.text).toContain("$0.75 to unlock")
        expect(second.text).toContain("$1.20 to unlock")
        expect(second.text).toContain("rel=\"prev\"")
        expect(second.text).toContain("<option value=\"price\" selected>Cheapest</option>")
        // A search again from the form keeps what it has no field for.
        expect(second.text).toContain(`<input type="hidden" name="limit" value="2">`)

        // Past the last page: not "nothing matches" over a count of four, and the way back is the last page.
        const past = yield* get(`/?tag=${tag}&sort=price&maxPrice=1.5&limit=2&page=3`)
        expect(past.status).toBe(200)
        expect(past.text).toContain(`4 handoffs tagged ${tag}`)
        expect(past.text).toContain("This page is past the last one.")
        expect(past.text).not.toContain("Nothing matches yet")
        expect(past.text).toContain(
          `Past the last page: <a href="/?tag=${tag}&amp;sort=price&amp;maxPrice=1.5&amp;limit=2&amp;page=2" rel="last">`
        )
        expect(past.text).not.toContain("Page 3 of 2")
      }))

    // Skipped where no Chromium is installed (.ci/run installs the Debian package); the checks above still run.
    it.effect("an agent's page links its filers and handoffs, and draws the chart from its history", () =>
      Effect.gen(function*() {
        const { agent, other, own, theirs } = yield* agentWithHistory
        const html = yield* get(`/agents/${agent}`)
        expect(html).toMatchObject({ status: 200, type: "text/html; charset=utf-8" })
        expect(html.text).toContain("$2.450001 of its $10.00 cap")
        // The way to raise the cap, as POST /api/agents takes it: with the agent's own X-AGENT-ID.
        expect(html.text).toContain(`<code>POST /api/agents</code> with the header <code>X-AGENT-ID: ${agent}</code>`)
        expect(html.text).toMatch(/<svg width="100%" height="220" role="img"/)
        expect(html.text).toMatch(/<g class="spent">(<line [^>]+\/>|<circle [^>]+\/>)+<\/g>/)
        expect(html.text).toMatch(/<g class="earned">(<line [^>]+\/>|<circle [^>]+\/>)+<\/g>/)
        expect(html.text).toContain(`href="/agents/${other}"><bdi>platypus-bot</bdi></a>`)

        // The filer of a preview links to its page, and the page to the handoffs.
        expect((yield* get(`/h/${theirs[0]}`)).text).toContain(
          `<a href="/agents/${other}"><bdi>platypus-bot</bdi></a>`
        )
        expect(html.text).toContain(`href="/h/${own[0]}"`)
      }))

    it.effect("an unknown or malformed agent id is a 404 page, or the JSON 404", () =>
      Effect.gen(function*() {
        for (const id of [newAgentId(), "did:desk:NOPE", "%3Cscript%3E"]) {
          const page = yield* get(`/agents/${id}`)
          expect(page.status, id).toBe(404)
          expect(page.type, id).toBe("text/html; charset=utf-8")
          expect(page.text, id).toContain("No such agent")
          expect(page.text, id).not.toContain("<script>")
          const json = yield* get(`/agents/${id}`, "application/json")
          expect(json.status, id).toBe(404)
          expect(JSON.parse(json.text), id).toMatchObject({ ok: false, error: "not_found" })
        }
      }))

    it.effect.skipIf(!existsSync(CHROMIUM))(
      "an owner sees the agent's page in Chromium: chart, tables, phone and desktop",
      () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const { agent, other, theirs } = yield* agentWithHistory
          mkdirSync(SHOTS, { recursive: true })
          for (
            const [name, viewport] of [["phone", { width: 375, height: 740 }], ["desktop", {
              width: 1100,
              height: 900
            }]] as const
          ) {
            const browser = yield* chromiumWith(viewport)
            const page = browser.pages()[0] ?? (yield* Effect.promise(() => browser.newPage()))
            yield* Effect.promise(async () => {
              await page.goto(`${desk.url}/h/${theirs[0]}`)
              await page.getByRole("link", { name: "platypus-bot" }).click()
              await page.waitForURL(`${desk.url}/agents/${other}`)
              await page.goto(`${desk.url}/agents/${agent}`)
              expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(`Agent ${agent}`)
              const chart = page.getByRole("img", { name: "Spend and earnings over time" })
              expect(await chart.count()).toBe(1)
              const box = await chart.boundingBox()
              // The main column is at most 46rem wide: the chart fills it, on a phone as on a desktop.
              expect(box!.width).toBeGreaterThan(Math.min(viewport.width, 736) * 0.8)
              expect(box!.height).toBeGreaterThan(100)
              // Seven days with activity: a point per day on each running total.
              expect(await page.locator("svg g.spent circle").count()).toBe(7)
              expect(await page.locator("svg g.earned circle").count()).toBe(7)
              expect(await page.getByRole("meter", { name: "Spend against the cap" }).getAttribute("aria-valuenow"))
                .toBe("2.450001")
              for (const section of ["Spend", "Earnings", "Spend and earnings over time", "Filings", "Purchases"]) {
                expect(await page.getByRole("heading", { level: 2, name: section, exact: true }).count(), section).toBe(
                  1
                )
              }
              expect(await page.getByRole("table").count()).toBe(2)
              // Long titles wrap inside their cells: no table needs its own scrollbar on a desktop.
              if (name === "desktop") {
                expect(
                  await page.evaluate(() =>
                    [...(globalThis as unknown as InPage).document.querySelectorAll(".table-wrap")].every((wrap) =>
                      wrap.scrollWidth <= wrap.clientWidth
                    )
                  )
                ).toBe(true)
              }
              // Headers and figures wrap between words, never inside one ("Pric/e", "$0.2/5"): only names and
              // titles (links) break anywhere. Each word of such a cell is on one line.
              expect(
                await page.evaluate(`[...document.querySelectorAll("th, td")]
                  .filter((cell) => cell.querySelector("a") === null)
                  .flatMap((cell) => [...cell.childNodes].filter((node) => node.nodeType === 3).flatMap((node) => {
                    const split = []
                    for (const word of node.textContent.matchAll(/\\S+/g)) {
                      const range = document.createRange()
                      range.setStart(node, word.index)
                      range.setEnd(node, word.index + word[0].length)
                      if (range.getClientRects().length > 1) split.push(word[0])
                    }
                    return split
                  }))`)
              ).toEqual([])
              expect(
                await page.evaluate(() => {
                  const { document, window } = globalThis as unknown as InPage
                  return document.documentElement.scrollWidth <= window.innerWidth
                })
              ).toBe(true)
              await page.screenshot({ path: join(SHOTS, `agent-${name}.png`), fullPage: true })
              await page.locator("figure.chart").screenshot({ path: join(SHOTS, `agent-${name}-chart.png`) })
            })
          }
        }).pipe(Effect.scoped),
      { timeout: 90_000 }
    )

    it.effect.skipIf(!existsSync(CHROMIUM))(
      "work in headless Chromium on a phone: search, landmarks, labels, contrast",
      () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const filed = yield* file({ title: "Wombat migration: the failed approaches, ranked" })
          const hostile = yield* file({ title: `Wombat ${HOSTILE}` })
          const browser = yield* chromiumWith({ width: 375, height: 740 })
          const page = browser.pages()[0] ?? (yield* Effect.promise(() => browser.newPage()))
          const pwned = () => page.evaluate(() => (globalThis as unknown as InPage).window.__pwned)
          const fitsThePhone = () =>
            page.evaluate(() => {
              const { document, window } = globalThis as unknown as InPage
              return document.documentElement.scrollWidth <= window.innerWidth
            })

          yield* Effect.promise(async () => {
            await page.goto(`${desk.url}/`)
            expect(await page.getAttribute("html", "lang")).toBe("en")
            expect(await page.getAttribute("meta[name=viewport]", "content")).toContain("width=device-width")
            for (const role of ["banner", "main", "contentinfo", "search"] as const) {
              expect(await page.getByRole(role).count(), role).toBe(1)
            }
            expect(await page.getByRole("navigation", { name: "For agents" }).count()).toBe(1)
            expect(await page.getByRole("heading", { level: 1 }).count()).toBe(1)

            await page.keyboard.press("Tab")
            expect(await page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.textContent))
              .toBe("Skip to content")

            await page.getByLabel("Search the catalog").fill("wombat")
            await page.getByRole("button", { name: "Search" }).click()
            await page.waitForURL(/\?q=wombat/)
            expect(await page.getByRole("heading", { level: 2 }).first().textContent()).toBe("2 handoffs for “wombat”")
            expect(await page.getByRole("link", { name: `Wombat ${HOSTILE}` }).count()).toBe(1)
            expect(await pwned()).toBeUndefined()
            expect(await fitsThePhone()).toBe(true)

            await page.getByLabel("Sort").selectOption("price")
            await page.getByLabel("Highest price (USD)").fill("100")
            await page.getByRole("button", { name: "Apply filters" }).click()
            await page.waitForURL(/sort=price/)
            expect(new URL(page.url()).searchParams.get("q")).toBe("wombat")
            expect(await page.getByRole("heading", { level: 2 }).first().textContent()).toBe(
              "2 handoffs for “wombat” at most $100.00"
            )
            expect(await fitsThePhone()).toBe(true)
            mkdirSync(SHOTS, { recursive: true })
            await page.screenshot({ path: join(SHOTS, "catalog-phone.png"), fullPage: true })

            await page.getByRole("link", { name: "Wombat migration: the failed approaches, ranked" }).click()
            await page.waitForURL(`${desk.url}/h/${filed.id}`)
            expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(
              "Wombat migration: the failed approaches, ranked"
            )
            expect(await page.getByRole("article").count()).toBe(1)
            expect(await page.content()).not.toContain(SEALED_LINE)
            expect(await fitsThePhone()).toBe(true)

            // WCAG 2.x contrast of text, muted text and links against the page background.
            const ratios = await page.evaluate(() => {
              const browser = globalThis as unknown as InPage
              const channel = (c: number) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4)
              const luminance = (css: string) => {
                const [r, g, b] = css.match(/\d+/g)!.map(Number) as [number, number, number]
                return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
              }
              const background = luminance(browser.getComputedStyle(browser.document.body).backgroundColor)
              return ["main p", "footer p", "main a", "dt"].map((selector) => {
                const fg = luminance(browser.getComputedStyle(browser.document.querySelector(selector)).color)
                return (Math.max(fg, background) + 0.05) / (Math.min(fg, background) + 0.05)
              })
            })
            for (const ratio of ratios) expect(ratio).toBeGreaterThanOrEqual(4.5)

            await page.goto(`${desk.url}/h/${hostile.id}`)
            expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(`Wombat ${HOSTILE}`)
            expect(await pwned()).toBeUndefined()

            const missing = await page.goto(`${desk.url}/h/DESK-999999999`)
            expect(missing?.status()).toBe(404)
            expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("No such handoff")
          })
        }).pipe(Effect.scoped),
      { timeout: 60_000 }
    )
  })
})
