import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chromium } from "playwright-core"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { prefersJson } from "../../src/Pages/Negotiate.ts"
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
  }
  getComputedStyle(element: unknown): { readonly color: string; readonly backgroundColor: string }
}

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
      return { status: response.status, type: response.headers.get("content-type"), vary: response.headers.get("vary"), text: await response.text() }
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

        const json = yield* get(`/h/${filed.id}`, "application/json")
        expect(json).toMatchObject({ status: 200, type: "application/json", vary: "Accept" })
        expect(JSON.parse(json.text)).toEqual(JSON.parse((yield* get(`/api/handoffs/${filed.id}`, "application/json")).text))

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
        // A person's search box never earns a 422: odd values fall back to defaults.
        expect((yield* get(`/?q=${"a".repeat(300)}&page=zero`)).status).toBe(200)
      }))

    // Skipped where no Chromium is installed (.ci/run installs the Debian package); the checks above still run.
    it.effect.skipIf(!existsSync(CHROMIUM))("work in headless Chromium on a phone: search, landmarks, labels, contrast", () =>
      Effect.gen(function*() {
        const desk = yield* TestDesk
        const filed = yield* file({ title: "Wombat migration: the failed approaches, ranked" })
        const hostile = yield* file({ title: `Wombat ${HOSTILE}` })
        const profile = mkdtempSync(join(tmpdir(), "desk-chromium-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(profile, { recursive: true, force: true })))
        const browser = yield* Effect.acquireRelease(
          Effect.promise(() =>
            chromium.launchPersistentContext(profile, {
              executablePath: CHROMIUM,
              headless: true,
              viewport: { width: 375, height: 740 },
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

          await page.getByRole("link", { name: "Wombat migration: the failed approaches, ranked" }).click()
          await page.waitForURL(`${desk.url}/h/${filed.id}`)
          expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Wombat migration: the failed approaches, ranked")
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
      }).pipe(Effect.scoped), { timeout: 60_000 })
  })
})
