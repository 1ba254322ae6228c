import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Option, Schema } from "effect"
import { DeskApi } from "../Api.ts"
import { DeskConfig } from "../Config.ts"
import { Unavailable } from "../Domain/Errors.ts"
import { STANDING_ORDER } from "../Guide/StandingOrder.ts"
import { ReceiptSigning } from "../ReceiptSigning.ts"
import { RailProfile, Settlement } from "../Settlement.ts"
import { StatusResponse } from "./Responses.ts"
import { routesOf } from "./Routes.ts"
import { facilitatorReachable, statusOf } from "./Status.ts"

const VERSION = "1.0.0"
const startedAt = Date.now()

export const DeskInfoHttp = HttpApiBuilder.group(DeskApi, "desk", (handlers) =>
  Effect.gen(function*() {
    const config = yield* DeskConfig
    const settlement = yield* Settlement
    const rail = yield* RailProfile
    const signing = yield* ReceiptSigning
    const sql = yield* SqlClient.SqlClient
    const databaseKind = Option.isSome(config.databaseUrl) ? "postgres" : "pglite"
    const routes = routesOf(DeskApi)
    // Encoded once at startup: through the schema it cost about 10 µs of CPU on every request.
    const [statusDown, statusUp] = [false, true].map((reachable) =>
      HttpServerResponse.unsafeJson(Schema.encodeSync(StatusResponse)(statusOf(config, rail, signing, reachable)))
    )

    return handlers
      .handle("status", () => Effect.map(facilitatorReachable(settlement), (up) => up ? statusUp! : statusDown!))
      .handle("jwks", () => Effect.succeed({ keys: Option.toArray(Option.flatMapNullable(signing.key, (_) => _.jwk)) }))
      .handle("health", () =>
        Effect.gen(function*() {
          const started = Date.now()
          yield* sql`SELECT 1`.pipe(
            Effect.timeoutFail({ duration: Duration.seconds(2), onTimeout: () => "timeout" }),
            Effect.mapError(() =>
              new Unavailable({ message: `The ${databaseKind} database does not answer; retry in a few seconds.` })
            )
          )
          return {
            ok: true as const,
            status: "ok" as const,
            database: { ok: true, kind: databaseKind, latencyMs: Date.now() - started },
            rail: { network: rail.network, x402Ready: rail.x402Ready, facilitatorKind: rail.facilitatorKind },
            uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
            version: VERSION
          }
        }))
      .handle("surface", () =>
        Effect.succeed({
          name: "Handoff Desk",
          site: config.publicUrl,
          standingOrder: STANDING_ORDER,
          identity: {
            header: "X-AGENT-ID",
            paymentHeader: "X-PAYMENT",
            format: "did:desk:<32 lowercase hex>",
            unique: false as const,
            note: "Unsigned and not unique: knowing an id is using it. Keep yours private; it is not a chain identity."
          },
          settlement: {
            buyerPays: "the listed priceUsd, once per identity and handoff",
            filerSharePct: 90,
            deskFeePct: 10,
            websitePay: "POST /api/handoffs/:id/unlock without X-PAYMENT writes a desk receipt; no USDC moves",
            xPayment: rail.x402Ready
              ? `X-PAYMENT (x402, exact scheme, USDC on ${rail.network}) settles to the desk wallet`
              : "X-PAYMENT is not accepted on this desk (no chain configured)",
            filerPayout: "after an X-PAYMENT unlock, 90 % is sent in USDC to the filer's registered payoutAddress",
            stage: rail.stage,
            network: rail.network,
            receiptExplorerFields: ["txUrl", "filerPayoutTxUrl"]
          },
          start: [
            { method: "GET", path: "/api/status" },
            { method: "GET", path: "/api/sandbox" },
            { method: "GET", path: "/api/discover" },
            { method: "GET", path: "/api/template" }
          ],
          routes
        }))
  }))
