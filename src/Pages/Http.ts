import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, ParseResult, Schema } from "effect"
import { DeskApi } from "../Api.ts"
import { Catalog } from "../Catalog.ts"
import { DeskConfig } from "../Config.ts"
import { unlockWords } from "../Desk/RailWords.ts"
import { DiscoverParams, toCatalogQuery } from "../Domain/Discover.ts"
import { InvalidQuery, type Issue } from "../Domain/Errors.ts"
import { issuesOf, summarize } from "../Domain/Issues.ts"
import { Owner } from "../Owner.ts"
import { RailProfile } from "../Settlement.ts"
import { agentNotFoundPage, agentPage } from "./AgentPage.ts"
import { catalogPage, invalidSearchPage } from "./CatalogPage.ts"
import { handoffPage, notFoundPage } from "./HandoffPage.ts"
import { prefersJson } from "./Negotiate.ts"

/**
 * What a page may load and who may show it: nothing but its own inline styles (the pages have no script, image or
 * font; the chart is inline SVG), forms sent back here, no framing, no sniffing, and no referrer to other sites (an
 * agent's page has the agent's id in its URL, and knowing an id is using it). Escaping stays the first defence.
 */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

const html = (body: string, status = 200) =>
  HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8", headers: PAGE_HEADERS })

/**
 * The catalog page's answer to a search parameter the edge refuses before the page is reached (its %-escapes are
 * not UTF-8): the 422 page a browser gets for any invalid parameter, or none (the JSON 422) for a client asking
 * for JSON.
 */
export const invalidSearchAnswer = (accept: string | undefined, issues: ReadonlyArray<Issue>) =>
  prefersJson(accept)
    ? undefined
    : HttpServerResponse.setHeader(html(invalidSearchPage(issues), 422), "vary", "Accept")

/** An agent's page (either form) has its id in the URL: no cache may keep it for the next one asking. */
const notKept = HttpApp.appendPreResponseHandler((_, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "cache-control", "private, no-store"))
)

const decodeSearch = Schema.decodeUnknownEither(DiscoverParams)

/** The parameters sent, to DiscoverParams as they are (the edge has left out a form's empty fields: src/Http/EmptyParams.ts). */
const sentParams = (params: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>) =>
  Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined))

export const PagesHttp = HttpApiBuilder.group(DeskApi, "pages", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    const owner = yield* Owner
    const config = yield* DeskConfig
    const unlock = unlockWords(yield* RailProfile)
    /** Both forms share a URL, so caches must key on Accept; a pre-response handler also reaches error responses. */
    const wantsJson = Effect.zipLeft(
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => prefersJson(request.headers.accept)),
      HttpApp.appendPreResponseHandler((_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "vary", "Accept"))
      )
    )

    return handlers
      .handle("home", ({ urlParams }) =>
        Effect.gen(function*() {
          const json = yield* wantsJson
          const sent = sentParams(urlParams)
          const decoded = decodeSearch(sent)
          if (Either.isLeft(decoded)) {
            const { issues, text } = summarize(issuesOf(ParseResult.ArrayFormatter.formatErrorSync(decoded.left)))
            return json
              ? yield* Effect.fail(new InvalidQuery({ message: `Invalid query parameter: ${text}`, issues }))
              : html(invalidSearchPage(issues), 422)
          }
          const query = toCatalogQuery(decoded.right)
          const [listing, tags] = yield* Effect.all([catalog.discover(query), catalog.tagsInUse(query.includeDemo)])
          if (!json) {
            // Decoded, so every value sent is a string.
            const params = sent as Record<string, string>
            const { items, itemsOmitted, match, pages, total } = listing
            return html(
              catalogPage({ query, params, pages, total, items, match, tags: tags.tags, omitted: itemsOmitted ?? 0 })
            )
          }
          return { ...listing, tags: tags.tags, tagCount: tags.total, sort: query.sort }
        }))
      .handle("handoff", ({ path }) =>
        Effect.gen(function*() {
          const json = yield* wantsJson
          return yield* catalog.get(path.id).pipe(
            Effect.map((preview) => (json ? preview : html(handoffPage(preview, config.publicUrl, unlock)))),
            Effect.catchTag(
              "NotFound",
              (error) => (json ? Effect.fail(error) : Effect.succeed(html(notFoundPage(path.id), 404)))
            )
          )
        }))
      .handle("agent", ({ path }) =>
        Effect.gen(function*() {
          const json = yield* wantsJson
          yield* notKept
          return yield* owner.view(path.id).pipe(
            Effect.map((view) => (json ? view : html(agentPage(view)))),
            Effect.catchTag(
              "NotFound",
              (error) => (json ? Effect.fail(error) : Effect.succeed(html(agentNotFoundPage(path.id), 404)))
            )
          )
        }))
  }))
