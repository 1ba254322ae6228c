import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import * as MemoryRateStore from "../../adapters/ratelimit/Memory.ts"
import * as DeskReceipt from "../../adapters/settlement/DeskReceipt.ts"
import { DeskConfig, type DeskSettings } from "../../src/Config.ts"
import { DeskLive } from "../../src/Desk.ts"
import { ClientConcurrency } from "../../src/Http/ClientConcurrency.ts"
import { TrustedProxies } from "../../src/Http/ClientIp.ts"
import { makeServer } from "../../src/Http/NodeServer.ts"
import type { RatePolicy } from "../../src/RateLimiter.ts"
import { ReceiptSigning } from "../../src/ReceiptSigning.ts"
import type { MoneyRails } from "../../src/Settlement.ts"
import type { SignIn } from "../../src/SignIn.ts"
import { migrated } from "../../src/Sql.ts"

export const PUBLIC_URL = "http://desk.test"

/** Suites send many requests from one address; the rate-limit tests set the real policy (and cap) themselves. */
const ROOMY: RatePolicy = { limit: 1_000_000, windowSeconds: 60 }

export class TestDesk extends Context.Tag("TestDesk")<TestDesk, {
  readonly url: string
  readonly request: (path: string, init?: RequestInit & { json?: unknown; agent?: string }) => Promise<Response>
}>() {}

const testDesk = Layer.effect(
  TestDesk,
  Effect.map(HttpServer.HttpServer, (server) => {
    const address = server.address
    const url = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : "http://unix"
    return {
      url,
      request: (path, init = {}) => {
        const { json, agent, headers, ...rest } = init
        return fetch(`${url}${path}`, {
          ...rest,
          headers: {
            accept: "application/json",
            ...(json === undefined ? {} : { "content-type": "application/json" }),
            ...(agent === undefined ? {} : { "x-agent-id": agent }),
            ...(headers as Record<string, string> | undefined)
          },
          ...(json === undefined ? {} : { method: rest.method ?? "POST", body: JSON.stringify(json) })
        })
      }
    }
  })
)

/** The real desk on an ephemeral loopback port over the given storage; exposes the SqlClient to inspect rows. */
export const deskOn = <E>(
  storage: Layer.Layer<SqlClient.SqlClient, E>,
  settlement: Layer.Layer<MoneyRails | SignIn, unknown> = DeskReceipt.layer,
  options: {
    readonly ratePolicy?: RatePolicy
    readonly clientConcurrency?: number
    readonly config?: Partial<DeskSettings>
    /** How offers and receipts are signed; nothing signed unless a test says so. */
    readonly receiptSigning?: Layer.Layer<ReceiptSigning>
  } = {}
) => {
  const sql = migrated(storage)
  return Layer.mergeAll(testDesk, DeskLive).pipe(
    Layer.provideMerge(settlement),
    Layer.provide([
      MemoryRateStore.layer(options.ratePolicy ?? ROOMY),
      options.receiptSigning ?? ReceiptSigning.none,
      TrustedProxies.layer([]),
      ClientConcurrency.layer(options.clientConcurrency ?? ROOMY.limit)
    ]),
    // The desk's own Node server (as `npm start` runs it): it writes the bodies sent in parts (src/Http/JsonParts.ts).
    Layer.provideMerge(NodeHttpServer.layer(() => makeServer({ requestSeconds: 30 }), { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(sql),
    Layer.provide(DeskConfig.layerWith({ publicUrl: PUBLIC_URL, databaseUrl: Option.none(), ...options.config }))
  )
}

/** Test-side JSON reader: responses are asserted field by field, so `any` keeps the assertions short. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const readJson = (response: Response): Promise<any> => response.json()
