import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { DeskApi } from "../Api.ts"
import { Catalog } from "../Catalog.ts"
import { DeskConfig } from "../Config.ts"
import { DEFAULT_LIMIT, type CatalogQuery } from "../Domain/Discover.ts"
import { catalogPage } from "./CatalogPage.ts"
import { handoffPage, notFoundPage } from "./HandoffPage.ts"
import { prefersJson } from "./Negotiate.ts"

const html = (body: string, status = 200) => HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8" })

const clip = (text: string | undefined, max: number) => [...(text?.trim() ?? "")].slice(0, max).join("")

const pageOf = (raw: string | undefined) => {
  const page = Number(raw)
  return Number.isInteger(page) && page >= 1 && page <= 1e9 ? page : 1
}

export const PagesHttp = HttpApiBuilder.group(DeskApi, "pages", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    const config = yield* DeskConfig
    /** Both forms share a URL, so caches must key on Accept; a pre-response handler also reaches error responses. */
    const wantsJson = Effect.zipLeft(
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => prefersJson(request.headers.accept)),
      HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeader(response, "vary", "Accept")))
    )

    return handlers
      .handle("home", ({ urlParams }) =>
        Effect.gen(function*() {
          const q = clip(urlParams.q, 200)
          const query: CatalogQuery = {
            q,
            tag: clip(urlParams.tag, 40).toLowerCase(),
            sort: q === "" ? "recent" : "relevance",
            maxPrice: null,
            minSavings: null,
            minReconstruct: null,
            since: null,
            vendor: "",
            page: pageOf(urlParams.page),
            limit: DEFAULT_LIMIT,
            includeDemo: false
          }
          const { items, total } = yield* catalog.search(query)
          const pages = Math.ceil(total / query.limit)
          if (!(yield* wantsJson)) {
            return html(catalogPage({ q: query.q, tag: query.tag, page: query.page, pages, total, items }))
          }
          const tags = yield* catalog.tagsInUse
          return { total, page: query.page, limit: query.limit, pages, tags, sort: query.sort, items }
        }))
      .handle("handoff", ({ path }) =>
        Effect.gen(function*() {
          const json = yield* wantsJson
          return yield* catalog.get(path.id).pipe(
            Effect.map((preview) => (json ? preview : html(handoffPage(preview, config.publicUrl)))),
            Effect.catchTag("NotFound", (error) => (json ? Effect.fail(error) : Effect.succeed(html(notFoundPage(path.id), 404))))
          )
        }))
  }))
