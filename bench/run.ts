import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Schema } from "effect"
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { cpus } from "node:os"
import { join } from "node:path"
import { type CatalogQuery, toCatalogQuery } from "../src/Domain/Discover.ts"
import { benchArgs } from "./Args.ts"
import { deskCommand, referenceCommand } from "./DeskCommand.ts"
import { directDiscover } from "./DirectSql.ts"
import { directUnlock } from "./DirectUnlock.ts"
import { cpuPerRequest, hammer, type WithCpu } from "./Measure.ts"
import { offer } from "./OpenLoop.ts"
import { freePort, type Server, startServer } from "./Processes.ts"
import { profileLines, readProfile, summarizeProfile } from "./Profile.ts"
import { prng } from "./Random.ts"
import {
  checksOf,
  judgedByEmptyHttpApi,
  mb,
  referenceOf,
  scalingLine,
  scenarioLine,
  type ScenarioResult,
  summary,
  watchScheduling,
  writeResults
} from "./Report.ts"
import { measureScaling } from "./Scaling.ts"
import { scenario, type ScenarioName, SCENARIOS } from "./Scenarios.ts"
import { benchStore, prepareCatalog, type StoreKind } from "./Store.ts"
import { TAGS, textQueries } from "./SyntheticCatalog.ts"

/** Where `--cpu-prof` has the desk write its profiles; the profiles of earlier runs stay. */
const PROFILES = join("bench", "profiles")
const profiles = () =>
  existsSync(PROFILES)
    ? readdirSync(PROFILES).filter((name) => name.endsWith(".cpuprofile")).map((name) => join(PROFILES, name))
    : []

const args = benchArgs(
  "npm run bench --",
  "Loads a synthetic catalog, starts the desk and measures its routes against an empty HttpApi endpoint, the\n" +
    "desk's search run directly in SQL and bare node:http (docs/benchmark.md). PostgreSQL when DATABASE_URL is\n" +
    "set, else embedded PGlite in .bench-data/.",
  {
    handoffs: { type: "string", default: "10000", help: "catalog size: 10000, 100000 or 1000000" },
    store: { type: "string", help: "pglite or postgres (default: postgres when DATABASE_URL is set)" },
    connections: { type: "string", default: "64", help: "concurrent connections of a closed-loop scenario" },
    duration: { type: "string", default: "10", help: "measured seconds per scenario" },
    warmup: { type: "string", default: "3", help: "warm-up seconds per scenario" },
    scenarios: { type: "string", default: SCENARIOS.join(","), help: "the scenarios to run, comma-separated" },
    seed: { type: "string", default: "1", help: "seed of the synthetic catalog and the requests" },
    reload: { type: "boolean", default: false, help: "rebuild the catalog even when it is already loaded" },
    desk: { type: "string", default: "start", help: "start (the bundle, as npm start runs it) or tsx" },
    "heap-mb": { type: "string", help: "the desk's --max-old-space-size instead of npm start's" },
    "cpu-prof": { type: "boolean", default: false, help: "write V8 CPU profiles of the desk into bench/profiles/" },
    rate: { type: "string", help: "offer n requests a second (open loop) instead of a closed loop" },
    workers: { type: "string", default: "1", help: "DESK_WORKERS of the desk (above 1 needs REDIS_URL)" },
    scaling: { type: "string", help: "compare n workers with one (default: 2 in a full run, 1 = none)" },
    "scaling-rounds": { type: "string", default: "3", help: "rounds of the workers comparison" },
    out: { type: "string", default: "bench/results", help: "directory of the results file" }
  }
)

const handoffs = Number(args.handoffs)
const connections = Number(args.connections)
const seconds = Number(args.duration)
const warmup = Number(args.warmup)
const seed = Number(args.seed)
const storeKind = (args.store ?? (process.env.DATABASE_URL === undefined ? "pglite" : "postgres")) as StoreKind
const scenarios = args.scenarios.split(",").map((_) => _.trim()) as Array<ScenarioName>
const heapMb = args["heap-mb"] === undefined ? undefined : Number(args["heap-mb"])
const rate = args.rate === undefined ? undefined : Number(args.rate)
const workers = Number(args.workers)
// A full run (no --scenarios) also compares one desk process with two on a route without the database.
const scaleTo = Number(args.scaling ?? (process.argv.some((arg) => arg.startsWith("--scenarios")) ? "1" : "2"))
const scalingRounds = Number(args["scaling-rounds"])

const Books = Schema.Struct({ balanced: Schema.Boolean, receipts: Schema.Number, handoffs: Schema.Number })
/** The desk's books; an answer that is not them stops the run with its status and body, to be read. */
const books = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/api/books`)
    return { status: response.status, text: await response.text() }
  }).pipe(
    Effect.flatMap(({ status, text }) =>
      Schema.decodeUnknown(Schema.parseJson(Books))(text).pipe(
        Effect.mapError(() => new Error(`GET /api/books answered ${status}: ${text.slice(0, 500)}`))
      )
    ),
    Effect.orDie
  )

/** A server process for the length of the scope: stopped however the run ends. */
const serverIn = (options: Omit<Parameters<typeof startServer>[0], "port">) =>
  Effect.acquireRelease(
    Effect.promise(async () => startServer({ ...options, port: await freePort() })),
    (server) => Effect.promise(() => server.stop())
  )

/** The empty HttpApi endpoint (the ceiling), run by `command`, started and warmed up. */
const emptyServer = (command: { readonly args: Array<string>; readonly env: Record<string, string> }) =>
  Effect.tap(
    serverIn({ ...command, readyPath: "/" }),
    (server) => Effect.promise(() => hammer(server.url, [{ method: "GET", path: "/" }], connections, warmup))
  )

/** One measurement of the empty endpoint: its throughput and its CPU per request. */
const measureEmpty = (server: Server) =>
  Effect.gen(function*() {
    const cpuBefore = server.cpuMs()
    const measured = yield* Effect.promise(() =>
      hammer(server.url, [{ method: "GET", path: "/" }], connections, seconds)
    )
    return {
      ...measured,
      cpuMsPerRequest: cpuPerRequest(server.cpuMs() - cpuBefore, measured)
    } satisfies WithCpu
  })

const program = Effect.gen(function*() {
  if (!Number.isInteger(handoffs) || handoffs < 1) return yield* Effect.fail("--handoffs takes a positive integer")
  if (args.desk !== "tsx" && args.desk !== "start") {
    return yield* Effect.fail("--desk takes start (as npm start) or tsx")
  }
  if (heapMb !== undefined && !(Number.isInteger(heapMb) && heapMb >= 64)) {
    return yield* Effect.fail("--heap-mb takes megabytes, 64 or more")
  }
  if (rate !== undefined && !(Number.isInteger(rate) && rate >= 1)) {
    return yield* Effect.fail("--rate takes requests per second offered to each scenario, 1 or more")
  }
  if (!(Number.isInteger(workers) && workers >= 1)) return yield* Effect.fail("--workers takes a positive integer")
  if (workers > 1 && (storeKind !== "postgres" || process.env.REDIS_URL === undefined)) {
    return yield* Effect.fail("--workers above 1 needs PostgreSQL and Redis: set DATABASE_URL and REDIS_URL")
  }
  if (!(Number.isInteger(scaleTo) && scaleTo >= 1)) {
    return yield* Effect.fail("--scaling takes how many workers to compare with one (1: no comparison)")
  }
  if (!(Number.isInteger(scalingRounds) && scalingRounds >= 1)) {
    return yield* Effect.fail("--scaling-rounds takes a positive integer")
  }
  const scalingPossible = storeKind === "postgres" && process.env.REDIS_URL !== undefined && rate === undefined
  if (args.scaling !== undefined && scaleTo > 1 && !scalingPossible) {
    return yield* Effect.fail("--scaling needs PostgreSQL and Redis (DATABASE_URL, REDIS_URL) and no --rate")
  }
  if (scenarios.some((_) => !SCENARIOS.includes(_))) {
    return yield* Effect.fail(`--scenarios takes a comma-separated list of ${SCENARIOS.join(", ")}`)
  }
  const store = benchStore(storeKind, handoffs, process.env.DATABASE_URL)
  const startedAt = new Date()
  yield* Console.log(
    `bench: ${handoffs.toLocaleString("en")} handoffs, ${store.label}, desk run ${
      args.desk === "tsx" ? "by tsx" : "as npm start runs it"
    }` +
      `${workers === 1 ? "" : ` in ${workers} workers`}` +
      `${heapMb === undefined ? "" : ` with a ${heapMb} MB heap`}, ${connections} connections, ` +
      `${seconds} s per scenario after ${warmup} s warm-up` +
      `${
        rate === undefined ? "" : `, ${rate} req/s offered (open loop)`
      }; ${cpus().length} CPUs, Node ${process.version}`
  )
  const load = yield* prepareCatalog(store, seed, handoffs, args.reload)

  // References first: for the embedded store the desk will own the data directory once it starts.
  const textMix = textQueries(seed, 1_000, handoffs).map((q) => toCatalogQuery({ q }))
  const tagMix = TAGS.map((tag) => toCatalogQuery({ tag, sort: "savings" }))
  /** Discover's own search run directly on the bench's pool, after `warmFor` seconds of it. */
  const measureDirect = (mix: ReadonlyArray<CatalogQuery>, warmFor: number) =>
    Effect.gen(function*() {
      yield* directDiscover(mix, connections, warmFor)
      return yield* directDiscover(mix, connections, seconds)
    }).pipe(Effect.provide(store.layer), Effect.orDie)
  const direct = { text: yield* measureDirect(textMix, warmup), tag: yield* measureDirect(tagMix, 1) }
  yield* Console.log(
    `reference: direct discover SQL ${direct.text.rps.toFixed(0)} req/s (text), ${
      direct.tag.rps.toFixed(0)
    } req/s (tag)`
  )
  // Unlock + body's own statements run directly: what the database allows the scenario, measured where it runs.
  // PostgreSQL only, where the target is judged: on the embedded store their writes, replayed as the desk opens
  // the directory, left its WebAssembly memory 25 MB larger for the whole run (the RSS target's).
  const unlockRandom = prng(seed ^ 0x0b0d7)
  const directUnlocks = scenarios.includes("unlock-body") && rate === undefined && store.kind === "postgres"
    ? yield* Effect.gen(function*() {
      yield* directUnlock(unlockRandom, handoffs, connections, warmup)
      return yield* directUnlock(unlockRandom, handoffs, connections, seconds)
    }).pipe(Effect.provide(store.layer), Effect.orDie)
    : undefined
  if (directUnlocks !== undefined) {
    yield* Console.log(
      `reference: direct unlock + body SQL ${directUnlocks.rps.toFixed(0)} unlocks/s, p99 ${
        directUnlocks.p99Ms.toFixed(1)
      } ms, ${directUnlocks.errors} errors, CPU ${directUnlocks.cpuMsPerRequest.toFixed(3)} ms/unlock`
    )
  }

  const deskKind = args.desk === "tsx" ? "tsx" : "start"
  // Run as the desk runs (bundled, or by tsx): the same server under tsx cost 10-25 % more CPU per request.
  const emptyCommand = yield* Effect.promise(() =>
    referenceCommand(deskKind, "bench/EmptyApi.ts", { ...process.env, ...store.env })
  )
  const emptyHttpApi = yield* Effect.scoped(Effect.flatMap(emptyServer(emptyCommand), measureEmpty))
  yield* Console.log(
    `reference: empty HttpApi endpoint ${emptyHttpApi.rps.toFixed(0)} req/s, p99 ${
      emptyHttpApi.p99Ms.toFixed(1)
    } ms, ` +
      `CPU ${emptyHttpApi.cpuMsPerRequest.toFixed(3)} ms/req`
  )

  const command = yield* Effect.promise(() => deskCommand(deskKind, heapMb, { ...process.env, ...store.env }))
  if (command.built !== undefined) {
    yield* Console.log(`desk: bundle built in ${command.built.toFixed(1)} s (before the measured start)`)
  }
  // Bare node:http serves the desk's own preview, so it is measured once the desk has answered one.
  const partial = {
    directSqlDiscoverText: direct.text,
    directSqlDiscoverTag: direct.tag,
    ...(directUnlocks === undefined ? {} : { directSqlUnlockBody: directUnlocks }),
    emptyHttpApi
  }
  const profilesBefore = new Set(profiles())
  const { booksAfter, booksBefore, document, peakRss, results, startupMs } = yield* Effect.scoped(
    Effect.gen(function*() {
      const desk = yield* serverIn({
        args: [
          ...(args["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${PROFILES}`] : []),
          ...command.args
        ],
        env: {
          ...command.env,
          ...store.env,
          DESK_TRUST_PROXY: "127.0.0.1",
          // One desk keeps its rate limit in memory, as a desk without REDIS_URL does: the REDIS_URL the
          // scaling comparison needs would otherwise give every limited request of the scenarios a round trip.
          ...(workers === 1
            ? { REDIS_URL: "" }
            : { DESK_WORKERS: String(workers), REDIS_URL: process.env.REDIS_URL! })
        },
        readyPath: "/api/health"
      })
      yield* Console.log(`desk: answered /api/health ${desk.startupMs.toFixed(0)} ms after spawn`)
      const document = yield* Effect.promise(() =>
        fetch(`${desk.url}/api/handoffs/DESK-1`).then((response) => response.arrayBuffer())
      )
      const booksBefore = yield* books(desk.url)
      // Kept running beside the desk, to be measured again right before each scenario judged against it.
      const empty = rate === undefined ? yield* emptyServer(emptyCommand) : undefined
      const results: Array<ScenarioResult> = []
      let peakRss = desk.takePeakRss()
      for (const name of scenarios) {
        // Warm-up on other ids and queries. An open-loop run warms up at its own rate: a saturating warm-up would
        // leave a queue (in the desk and in PostgreSQL) that the measured seconds then pay for, which is not the
        // offered load being judged.
        // Filings continue where earlier runs stopped, and the measured run goes on with the warm-up's own counter,
        // so no body is filed twice (a repeat is a 409): books read between the two would miss the warm-up's
        // filings still in flight. Up to `connections` of an earlier run's may be in flight too: they are skipped.
        const run = scenario(
          name,
          seed,
          handoffs,
          name === "file" ? (yield* books(desk.url)).handoffs - handoffs + connections : 0
        )
        const beside = empty !== undefined && judgedByEmptyHttpApi(name) ? yield* measureEmpty(empty) : undefined
        // On PostgreSQL the search can run beside the desk (the embedded store is the desk's alone once it runs).
        const mix = name === "discover-text" ? textMix : name === "discover-tag" ? tagMix : undefined
        const directBeside = rate === undefined && store.kind === "postgres" && mix !== undefined
          ? yield* measureDirect(mix, 1)
          : undefined
        const warming = name === "file" ? run.requests : scenario(name, seed + 1, handoffs, 0).requests
        yield* Effect.promise(() =>
          rate === undefined
            ? hammer(desk.url, warming, connections, warmup)
            : offer(desk.url, warming, rate, warmup)
        )
        desk.takePeakRss()
        const cpuBefore = desk.cpuMs()
        const scheduled = watchScheduling(desk)
        const measured = yield* Effect.promise(() =>
          rate === undefined
            ? hammer(desk.url, run.requests, connections, seconds)
            : offer(desk.url, run.requests, rate, seconds)
        )
        // With workers the process is their supervisor, whose thread says nothing of the requests.
        const scheduling = workers === 1 ? scheduled() : undefined
        const peak = desk.takePeakRss()
        peakRss = Math.max(peakRss, peak)
        const row: ScenarioResult = {
          name,
          title: run.title,
          ...measured,
          peakRssMb: mb(peak),
          deskCpuMsPerRequest: cpuPerRequest(desk.cpuMs() - cpuBefore, measured),
          ...(name === "unlock-body" ? { unlocksPerSecond: run.unlocks() / measured.seconds } : {}),
          ...(beside === undefined ? {} : { emptyHttpApiBeside: beside }),
          ...(directBeside === undefined ? {} : { directSqlBeside: directBeside }),
          ...(scheduling === undefined ? {} : { scheduling })
        }
        results.push(row)
        yield* Console.log(scenarioLine(row, rate === undefined ? referenceOf(name, partial, row) : undefined))
      }
      const booksAfter = yield* books(desk.url)
      return { booksAfter, booksBefore, document, peakRss, results, startupMs: desk.startupMs }
    })
  )

  // Node writes a thread's profile as it exits: the desk has stopped by now.
  for (const file of profiles().filter((file) => !profilesBefore.has(file))) {
    for (const line of profileLines(file, summarizeProfile(readProfile(file), process.cwd()))) {
      yield* Console.log(line)
    }
  }

  /** One desk process against `scaleTo` of them, side by side, on a route that does not touch the database. */
  const scaling = scaleTo > 1 && scalingPossible
    ? yield* Effect.scoped(Effect.gen(function*() {
      const env = { ...command.env, ...store.env, DESK_TRUST_PROXY: "127.0.0.1", REDIS_URL: process.env.REDIS_URL! }
      const one = yield* serverIn({ args: command.args, env, readyPath: "/api/health" })
      const many = yield* serverIn({
        args: command.args,
        env: { ...env, DESK_WORKERS: String(scaleTo) },
        readyPath: "/api/health"
      })
      const llms = scenario("llms", seed, handoffs)
      return yield* Effect.promise(() =>
        measureScaling({
          one,
          many,
          workers: scaleTo,
          route: llms.title,
          requests: llms.requests,
          rounds: scalingRounds,
          connections,
          warmup,
          seconds
        })
      )
    }))
    : undefined
  yield* Console.log(scalingLine(scaleTo, scaling))

  const documentPath = join(".bench-data", "preview.json")
  mkdirSync(".bench-data", { recursive: true })
  writeFileSync(documentPath, Buffer.from(document))
  const bare = yield* Effect.scoped(Effect.gen(function*() {
    const server = yield* serverIn({
      args: ["--import", "tsx", "bench/BareHttp.ts"],
      env: { BENCH_DOCUMENT: documentPath },
      readyPath: "/"
    })
    yield* Effect.promise(() => hammer(server.url, [{ method: "GET", path: "/" }], connections, warmup))
    return yield* Effect.promise(() => hammer(server.url, [{ method: "GET", path: "/" }], connections, seconds))
  }))
  yield* Console.log(`reference: bare node:http ${bare.rps.toFixed(0)} req/s, p99 ${bare.p99Ms.toFixed(1)} ms`)

  const references = { ...partial, bareNodeHttp: bare }
  const checks = checksOf(results, references, { peakRssMb: mb(peakRss), startupMs, workers, scaling }, {
    balanced: booksAfter.balanced,
    receiptsAdded: booksAfter.receipts - booksBefore.receipts
  }, rate)
  yield* Console.log(summary(checks))
  const file = writeResults(args.out, startedAt, {
    options: {
      handoffs,
      store: store.kind,
      desk: args.desk,
      heapMb: heapMb ?? null,
      connections,
      seconds,
      warmup,
      seed,
      rate: rate ?? null,
      workers
    },
    load,
    startupMs,
    scenarios: results,
    ...(scaling === undefined ? {} : { scaling }),
    references,
    checks
  })
  yield* Console.log(`results: ${file}`)
})

program.pipe(
  Effect.catchAll((error) =>
    Effect.sync(() => {
      process.stderr.write(`bench: ${String(error)}\n`)
      process.exitCode = 1
    })
  ),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
