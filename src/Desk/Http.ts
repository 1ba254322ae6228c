import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Option, Runtime, Schema } from "effect"
import { DeskApi } from "../Api.ts"
import { boarding } from "../Boarding.ts"
import { DeskConfig } from "../Config.ts"
import { Unavailable } from "../Domain/Errors.ts"
import { STANDING_ORDER } from "../Guide/StandingOrder.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { ReceiptSigning } from "../ReceiptSigning.ts"
import { RailProfile, Settlement } from "../Settlement.ts"
import { freeMegabytes, minFreeDiskConfig } from "./DiskSpace.ts"
import { StatusResponse } from "./Responses.ts"
import { routesOf } from "./Routes.ts"
import { facilitatorReachable, statusOf } from "./Status.ts"

const VERSION = "1.0.0"
/** How long /api/health waits for the database before it answers 503. */
const HEALTH_TIMEOUT_MS = 2_000
const startedAt = Date.now()

export const DeskInfoHttp = HttpApiBuilder.group(DeskApi, "desk", (handlers) =>
  Effect.gen(function*() {
    const config = yield* DeskConfig
    const settlement = yield* Settlement
    const rail = yield* RailProfile
    const signing = yield* ReceiptSigning
    const { policy } = yield* RateLimiter
    const sql = yield* SqlClient.SqlClient
    const databaseKind = Option.isSome(config.databaseUrl) ? "postgres" : "pglite"
    const minFreeMb = yield* minFreeDiskConfig
    // The embedded store's disk, when it is too full to write (PostgreSQL's disk is its server's to watch). Read at
    // most once a second: health is not rate limited, and a flood of checks is no flood of statfs calls.
    let disk = { readAt: 0, free: undefined as number | undefined }
    const diskTooFull = databaseKind === "pglite" && minFreeMb > 0
      ? Effect.suspend(() =>
        Date.now() - disk.readAt < 1_000
          ? Effect.succeed(disk.free)
          : Effect.map(freeMegabytes(config.dataDir), (free) => (disk = { readAt: Date.now(), free }).free)
      ).pipe(Effect.flatMap((free) =>
        free === undefined || free >= minFreeMb ? Effect.void : Effect.fail(
          new Unavailable({
            message: `The embedded store's disk (DESK_DATA_DIR) has ${free} MB free, under the ` +
              `${minFreeMb} MB it needs to take writes; free some space.`
          })
        )
      ))
      : Effect.void
    const routes = routesOf(DeskApi)
    // Encoded once at startup: through the schema it cost about 10 µs of CPU on every request.
    const [statusDown, statusUp] = [false, true].map((reachable) =>
      HttpServerResponse.unsafeJson(
        Schema.encodeSync(StatusResponse)(statusOf(config, rail, signing, policy, reachable))
      )
    )

    const runtime = yield* Effect.runtime<never>()
    const silent = new Unavailable({
      message: `The ${databaseKind} database does not answer; retry in a few seconds.`
    })
    // Checks made while a probe is out share the next one: health is exempt from the rate limit, so a flood of
    // checks must not become a flood of statements. A probe lands within the timeout, answered or not, without
    // waiting for its statement's interruption, so a silent database never holds back the next one.
    const probe = boarding({
      run: Runtime.runFork(runtime),
      send: () => sql`SELECT 1`.pipe(Effect.disconnect, Effect.timeout(HEALTH_TIMEOUT_MS), Effect.asVoid)
    })
    /**
     * A probe (`SELECT 1`) begun after the check answered within two seconds. The wait runs on a fiber of its own,
     * raced by a timer that answers at once and leaves the wait to be interrupted behind it. Through
     * Effect.timeout the answer waited for the statement's interruption too (a pg cancel, sent to the same silent
     * server): 7 s, not 2, against a database that stopped answering (test/process/SilentDatabase.test.ts); and
     * forking from the request's fiber and joining back cost about 100 us of the health check's ~330 us of CPU.
     */
    const databaseAnswers = Effect.async<void, Unavailable>((resume) => {
      // Whichever comes first answers; a later call of resume is ignored.
      const timer = setTimeout(() => {
        resume(Effect.fail(silent))
        interrupt()
      }, HEALTH_TIMEOUT_MS)
      const interrupt = Runtime.runCallback(runtime)(probe(true), {
        onExit: (exit) => {
          clearTimeout(timer)
          resume(Exit.isSuccess(exit) ? Effect.void : Effect.fail(silent))
        }
      })
      return Effect.sync(() => {
        clearTimeout(timer)
        interrupt()
      })
    })

    return handlers
      .handle("status", () => Effect.map(facilitatorReachable(settlement), (up) => up ? statusUp! : statusDown!))
      .handle("jwks", () => Effect.succeed({ keys: Option.toArray(Option.flatMapNullable(signing.key, (_) => _.jwk)) }))
      .handle("health", () =>
        Effect.gen(function*() {
          const started = Date.now()
          yield* databaseAnswers
          yield* diskTooFull
          return {
            ok: true as const,
            status: "ok" as const,
            database: { ok: true, kind: databaseKind, latencyMs: Date.now() - started },
            rail: {
              network: rail.network,
              x402Ready: rail.x402Ready,
              facilitatorKind: rail.facilitatorKind,
              facilitatorReachable: yield* facilitatorReachable(settlement)
            },
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
            websitePay: config.paymentRequired
              ? "POST /api/handoffs/:id/unlock without X-PAYMENT answers 402 with the x402 challenge: this desk " +
                "requires on-chain payment (the sandbox's demo packet stays free)"
              : "POST /api/handoffs/:id/unlock without X-PAYMENT writes a desk receipt; no USDC moves",
            xPayment: rail.x402Ready
              ? `X-PAYMENT (x402, exact scheme, USDC on ${rail.network}) settles to the desk wallet`
              : "X-PAYMENT is not accepted on this desk (no chain configured)",
            filerPayout: rail.x402Ready
              ? "after an X-PAYMENT unlock, 90 % is sent in USDC to the filer's registered payoutAddress"
              : "90 % of each sale is recorded to the filer on the ledger; no USDC is sent on this desk",
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
