import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Schema } from "effect"
import { cpus, totalmem } from "node:os"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { toCatalogQuery } from "../src/Domain/Discover.ts"
import { bundleDesk } from "./DeskBundle.ts"
import { directDiscover } from "./DirectSql.ts"
import { hammer, type Measured } from "./Measure.ts"
import { freePort, startServer } from "./Processes.ts"
import { SCENARIOS, scenario, type ScenarioName } from "./Scenarios.ts"
import { benchStore, prepareCatalog, type StoreKind } from "./Store.ts"
import { TAGS, textQueries } from "./SyntheticCatalog.ts"

const { values: args } = parseArgs({
  options: {
    handoffs: { type: "string", default: "10000" },
    store: { type: "string" },
    connections: { type: "string", default: "64" },
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    scenarios: { type: "string", default: SCENARIOS.join(",") },
    seed: { type: "string", default: "1" },
    reload: { type: "boolean", default: false },
    desk: { type: "string", default: "tsx" },
    "cpu-prof": { type: "boolean", default: false },
    out: { type: "string", default: "bench/results" }
  }
})

const handoffs = Number(args.handoffs)
const connections = Number(args.connections)
const seconds = Number(args.duration)
const warmup = Number(args.warmup)
const seed = Number(args.seed)
const storeKind = (args.store ?? (process.env.DATABASE_URL === undefined ? "pglite" : "postgres")) as StoreKind
const scenarios = args.scenarios.split(",").map((_) => _.trim()) as Array<ScenarioName>

const Books = Schema.Struct({ balanced: Schema.Boolean, receipts: Schema.Number })
const books = (url: string) =>
  Effect.promise(() => fetch(`${url}/api/books`).then((response) => response.json())).pipe(
    Effect.flatMap(Schema.decodeUnknown(Books)),
    Effect.orDie
  )

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)
const fixed = (n: number, digits = 1) => n.toFixed(digits)

const program = Effect.gen(function*() {
  if (!Number.isInteger(handoffs) || handoffs < 1) return yield* Effect.fail("--handoffs takes a positive integer")
  if (args.desk !== "tsx" && args.desk !== "bundle") return yield* Effect.fail("--desk takes tsx (as npm start) or bundle")
  if (scenarios.some((_) => !SCENARIOS.includes(_))) {
    return yield* Effect.fail(`--scenarios takes a comma-separated list of ${SCENARIOS.join(", ")}`)
  }
  const store = benchStore(storeKind, handoffs, process.env.DATABASE_URL)
  const startedAt = new Date()
  yield* Console.log(
    `bench: ${handoffs.toLocaleString("en")} handoffs, ${store.label}, desk run by ${args.desk}, ${connections} connections, ` +
      `${seconds} s per scenario after ${warmup} s warm-up; ${cpus().length} CPUs, Node ${process.version}`
  )
  const load = yield* prepareCatalog(store, seed, handoffs, args.reload)

  // References first: for the embedded store the desk will own the data directory once it starts.
  const textMix = textQueries(seed, 1_000, handoffs).map((q) => toCatalogQuery({ q }))
  const tagMix = TAGS.map((tag) => toCatalogQuery({ tag, sort: "savings" }))
  const direct = yield* Effect.gen(function*() {
    yield* directDiscover(textMix, connections, warmup)
    const text = yield* directDiscover(textMix, connections, seconds)
    const tag = yield* directDiscover(tagMix, connections, seconds)
    return { text, tag }
  }).pipe(Effect.provide(store.layer), Effect.orDie)
  yield* Console.log(`reference: direct discover SQL ${fixed(direct.text.rps, 0)} req/s (text), ${fixed(direct.tag.rps, 0)} req/s (tag)`)

  const profileDir = join("bench", "profiles")
  const entry = args.desk === "tsx" ? ["--import", "tsx", "src/main.ts"] : [(yield* Effect.promise(bundleDesk)).file]
  const desk = yield* Effect.promise(async () =>
    startServer({
      args: [...(args["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []), ...entry],
      env: { ...store.env, DESK_TRUST_PROXY: "127.0.0.1" },
      readyPath: "/api/health",
      port: await freePort()
    })
  )
  yield* Console.log(`desk: answered /api/health ${fixed(desk.startupMs, 0)} ms after spawn`)
  const document = yield* Effect.promise(() => fetch(`${desk.url}/api/handoffs/DESK-1`).then((response) => response.arrayBuffer()))
  const booksBefore = yield* books(desk.url)

  const results: Array<Measured & { name: ScenarioName; title: string; peakRssMb: number; unlocksPerSecond?: number }> = []
  let peakRss = desk.takePeakRss()
  for (const name of scenarios) {
    yield* Effect.promise(() => hammer(desk.url, scenario(name, seed + 1, handoffs).requests, connections, warmup))
    desk.takePeakRss()
    const run = scenario(name, seed, handoffs)
    const measured = yield* Effect.promise(() => hammer(desk.url, run.requests, connections, seconds))
    const peak = desk.takePeakRss()
    peakRss = Math.max(peakRss, peak)
    const row = {
      name,
      title: run.title,
      ...measured,
      peakRssMb: mb(peak),
      ...(name === "unlock-body" ? { unlocksPerSecond: run.unlocks() / measured.seconds } : {})
    }
    results.push(row)
    yield* Console.log(
      `  ${run.title.padEnd(32)} ${fixed(row.rps, 0).padStart(7)} req/s  p50 ${fixed(row.p50Ms).padStart(6)} ms  ` +
        `p99 ${fixed(row.p99Ms).padStart(6)} ms  errors ${row.errors}  peak RSS ${row.peakRssMb} MB` +
        (row.unlocksPerSecond === undefined ? "" : `  (${fixed(row.unlocksPerSecond, 0)} unlocks/s)`)
    )
  }
  const booksAfter = yield* books(desk.url)
  yield* Effect.promise(() => desk.stop())

  const documentPath = join(".bench-data", "preview.json")
  mkdirSync(".bench-data", { recursive: true })
  writeFileSync(documentPath, Buffer.from(document))
  const bare = yield* Effect.promise(async () => {
    const server = await startServer({
      args: ["--import", "tsx", "bench/BareHttp.ts"],
      env: { BENCH_DOCUMENT: documentPath },
      readyPath: "/",
      port: await freePort()
    })
    await hammer(server.url, [{ method: "GET", path: "/" }], connections, warmup)
    const measured = await hammer(server.url, [{ method: "GET", path: "/" }], connections, seconds)
    await server.stop()
    return measured
  })
  yield* Console.log(`reference: bare node:http ${fixed(bare.rps, 0)} req/s, p99 ${fixed(bare.p99Ms)} ms`)

  const byName = new Map(results.map((_) => [_.name, _]))
  const unlocks = byName.get("unlock-body")
  const checks = {
    discoverTextP99Ms: byName.get("discover-text")?.p99Ms ?? null,
    discoverTextVsDirectSql: byName.has("discover-text") ? byName.get("discover-text")!.rps / direct.text.rps : null,
    discoverTagVsDirectSql: byName.has("discover-tag") ? byName.get("discover-tag")!.rps / direct.tag.rps : null,
    previewVsBareHttp: byName.has("preview") ? byName.get("preview")!.rps / bare.rps : null,
    unlocksPerSecond: unlocks?.unlocksPerSecond ?? null,
    unlockErrors: unlocks?.errors ?? null,
    booksBalanced: booksAfter.balanced,
    receiptsAdded: booksAfter.receipts - booksBefore.receipts,
    peakRssMb: mb(peakRss),
    startupMs: Math.round(desk.startupMs)
  }
  yield* Console.log(
    [
      "",
      `discover text:  p99 ${fixed(checks.discoverTextP99Ms ?? NaN)} ms (target < 50), ` +
      `${fixed(100 * (checks.discoverTextVsDirectSql ?? NaN), 0)} % of direct SQL (target >= 50 %)`,
      `discover tag:   ${fixed(100 * (checks.discoverTagVsDirectSql ?? NaN), 0)} % of direct SQL`,
      `preview:        ${fixed(100 * (checks.previewVsBareHttp ?? NaN), 0)} % of bare node:http (target >= 25 %)`,
      `unlock + body:  ${fixed(checks.unlocksPerSecond ?? NaN, 0)} unlocks/s (target >= 500), ${checks.unlockErrors} errors, ` +
      `books ${checks.booksBalanced ? "balanced" : "NOT balanced"}, ${checks.receiptsAdded} receipts added`,
      `desk:           peak RSS ${checks.peakRssMb} MB (target < 250), startup ${checks.startupMs} ms (target < 2000)`
    ].join("\n")
  )

  mkdirSync(args.out, { recursive: true })
  const file = join(args.out, `${startedAt.toISOString().replace(/[:.]/g, "-")}.json`)
  writeFileSync(
    file,
    JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryMb: mb(totalmem()), node: process.version },
        options: { handoffs, store: store.kind, desk: args.desk, connections, seconds, warmup, seed },
        load,
        startupMs: desk.startupMs,
        scenarios: results,
        references: { directSqlDiscoverText: direct.text, directSqlDiscoverTag: direct.tag, bareNodeHttp: bare },
        checks
      },
      null,
      2
    ) + "\n"
  )
  yield* Console.log(`results: ${file}`)
})

program.pipe(
  Effect.catchAll((error) => Effect.sync(() => {
    process.stderr.write(`bench: ${String(error)}\n`)
    process.exitCode = 1
  })),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
