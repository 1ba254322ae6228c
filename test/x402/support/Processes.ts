import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { filing, newAgentId } from "../../support/Fixtures.ts"
import { backends, DATABASE_URL, freshDatabaseUrl } from "../../support/Storage.ts"
import type { TestChainShape } from "./Chain.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))

/** `npm start`'s environment against the test chain, as an operator sets it after `npm run chain`. */
export const deskEnv = ({ chain }: TestChainShape, rpcUrl: string, store: Record<string, string>) => ({
  ...store,
  DESK_CHAIN_RPC_URL: rpcUrl,
  DESK_NETWORK: "base-sepolia",
  DESK_ASSET_ADDRESS: chain.tokenAddress,
  DESK_ASSET_NAME: "USDC",
  DESK_ASSET_VERSION: "2",
  DESK_PAY_TO: chain.accounts.desk.address,
  DESK_WALLET_PRIVATE_KEY: chain.accounts.desk.privateKey,
  DESK_EXPLORER_URL: "",
  DESK_PAYMENT_REQUIRED: "true",
  DESK_OUTBOX_INTERVAL_MS: "300",
  DESK_PAYOUT_RETRY_MS: "300",
  DESK_CHAIN_TIMEOUT_MS: "1500",
  DESK_CONFIRM_TIMEOUT_MS: "1000",
  // Tests poll receipts every 100 ms for minutes.
  DESK_RATE_LIMIT: "100000"
})

/** This project's store: an embedded data directory, or a fresh PostgreSQL database. */
export const processStore = Effect.gen(function*() {
  const backend = backends[0]!
  if (backend.name === "postgres") return { DATABASE_URL: yield* freshDatabaseUrl(DATABASE_URL!) }
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "handoff-x402-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  return { DESK_DATA_DIR: dir }
})

export const call = (
  url: string,
  path: string,
  init: { json?: unknown; agent?: string; headers?: Record<string, string> } = {}
) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${path}`, {
      method: init.json === undefined ? "GET" : "POST",
      headers: {
        accept: "application/json",
        ...(init.json === undefined ? {} : { "content-type": "application/json" }),
        ...(init.agent === undefined ? {} : { "x-agent-id": init.agent }),
        ...init.headers
      },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) })
    })
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, headers: response.headers, json: (await response.json()) as any }
  })

/** Files a handoff (priced `priceUsd`) whose filer is paid at `payee`, or has no address yet. */
export const fileWith = (url: string, priceUsd: number, payee?: string) =>
  Effect.gen(function*() {
    const filer = newAgentId()
    const overrides = payee === undefined ? { priceUsd } : { priceUsd, payoutAddress: payee }
    const filed = yield* call(url, "/api/handoffs", { json: filing(filer, overrides), agent: filer })
    if (filed.status !== 201) return yield* Effect.dieMessage(`filing failed: ${JSON.stringify(filed.json)}`)
    return { id: filed.json.id as string, filer }
  })

export const receiptsAt = (url: string, buyer: string) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  Effect.map(call(url, `/api/receipts?payer=${buyer}`), (_) => _.json.receipts as Array<any>)

/** `npm run audit` with a desk's environment: its exit code and what it printed. */
export const runAudit = (env: Record<string, string>) =>
  Effect.async<{ code: number; output: string }>((resume) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/audit.ts"],
      { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resume(
          Effect.succeed({
            code: error === null ? 0 : Number((error as { code?: unknown }).code ?? 1),
            output: stdout + stderr
          })
        )
    )
  })
