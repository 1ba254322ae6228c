import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { execFileSync } from "node:child_process"
import { existsSync, rmSync, symlinkSync } from "node:fs"
import { join, resolve } from "node:path"
import { bundleDesk, startCommand } from "../scripts/bundle.mjs"
import { benchArgs } from "./Args.ts"
import { cpuPerRequest, hammer, median } from "./Measure.ts"
import { freePort, startServer } from "./Processes.ts"
import { watchScheduling } from "./Report.ts"
import { scenario, type ScenarioName, SCENARIOS } from "./Scenarios.ts"
import { benchStore, prepareCatalog, type StoreKind } from "./Store.ts"

/**
 * Scenarios every round can run alike: all but filing, whose bodies would be filed again (409). Unlocks are
 * bought by payers of their own in every round (the scenario's identities are fresh each time it is made), so a
 * round adds receipts and identities but finds the catalog's handoffs as the first did.
 */
const COMPARABLE: ReadonlyArray<ScenarioName> = SCENARIOS.filter((name) => name !== "file")

const args = benchArgs(
  "npm run bench:compare --",
  "Bundles this checkout and --base, then measures both on the same catalog in alternating rounds and prints\n" +
    "each round's desk CPU a request and throughput (docs/benchmark.md).",
  {
    base: { type: "string", default: "HEAD", help: "the revision to compare this checkout with" },
    handoffs: { type: "string", default: "100000", help: "catalog size" },
    scenarios: { type: "string", default: "llms,status,preview", help: "scenarios, comma-separated (not file)" },
    rounds: { type: "string", default: "3", help: "alternating rounds" },
    connections: { type: "string", default: "64", help: "concurrent connections" },
    duration: { type: "string", default: "6", help: "measured seconds per scenario and round" },
    warmup: { type: "string", default: "2", help: "warm-up seconds per scenario and round" },
    seed: { type: "string", default: "1", help: "seed of the synthetic catalog and the requests" }
  }
)

const handoffs = Number(args.handoffs)
const rounds = Number(args.rounds)
const seed = Number(args.seed)
const scenarios = args.scenarios.split(",").map((_) => _.trim()) as Array<ScenarioName>
const sources = resolve(".build", "compare-base")

/**
 * The desk of `rev` bundled as `npm start` runs it, in a worktree that shares this checkout's node_modules and is
 * removed when the comparison ends; the bundle reads its static documents from there, as a deployment would.
 */
const bundleOf = (rev: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      rmSync(sources, { recursive: true, force: true })
      execFileSync("git", ["worktree", "prune"])
      execFileSync("git", ["worktree", "add", "--detach", sources, rev], { stdio: "ignore" })
      symlinkSync(resolve("node_modules"), join(sources, "node_modules"))
      return sources
    }),
    () => Effect.sync(() => execFileSync("git", ["worktree", "remove", "--force", sources]))
  ).pipe(Effect.flatMap((root) =>
    Effect.sync(() => {
      execFileSync(process.execPath, [
        "--input-type=module",
        "-e",
        `import(${JSON.stringify(join(root, "scripts", "bundle.mjs"))}).then((m) => m.bundleDesk())`
      ], { cwd: root, stdio: "inherit" })
      return join(root, ".build", "desk", "main.mjs")
    })
  ))

/**
 * This checkout's desk against the one of `--base` (a git revision), scenario by scenario, in alternating rounds
 * (the order swapped each round: which one runs first moved the figures here). Each side is started
 * fresh, warmed up and measured as the bench measures it; the desk's CPU per request is the figure to compare.
 */
const program = Effect.gen(function*() {
  if (!Number.isInteger(rounds) || rounds < 1) return yield* Effect.fail("--rounds takes a positive integer")
  if (scenarios.some((_) => !COMPARABLE.includes(_))) {
    return yield* Effect.fail(`--scenarios takes ${COMPARABLE.join(", ")}`)
  }
  const kind: StoreKind = process.env.DATABASE_URL === undefined ? "pglite" : "postgres"
  const store = benchStore(kind, handoffs, process.env.DATABASE_URL)
  yield* prepareCatalog(store, seed, handoffs, false)
  const sides = [
    { name: "this checkout", file: (yield* Effect.promise(() => bundleDesk())).file },
    { name: `base ${args.base}`, file: yield* bundleOf(args.base) }
  ]
  const missing = sides.find((side) => !existsSync(side.file))
  if (missing !== undefined) return yield* Effect.fail(`no bundle of ${missing.name} at ${missing.file}`)
  const start = startCommand(process.env)
  const command = (file: string) => [...start.args.slice(0, -1), file]
  for (const name of scenarios) {
    const cpu = sides.map((): Array<number> => [])
    for (let round = 0; round < rounds; round++) {
      for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const side = sides[index]!
        const desk = yield* Effect.promise(async () =>
          startServer({
            args: command(side.file),
            // As the bench's scenarios run it: the rate limit in memory, even where REDIS_URL is set.
            env: { ...start.env, ...store.env, DESK_TRUST_PROXY: "127.0.0.1", REDIS_URL: "" },
            readyPath: "/api/health",
            port: await freePort()
          })
        )
        const load = (scenarioSeed: number, seconds: string) =>
          hammer(desk.url, scenario(name, scenarioSeed, handoffs).requests, Number(args.connections), Number(seconds))
        const measured = yield* Effect.promise(async () => {
          await load(seed + 1, args.warmup)
          const before = desk.cpuMs()
          const scheduling = watchScheduling(desk)
          const result = await load(seed, args.duration)
          return { ...result, cpuUs: 1000 * cpuPerRequest(desk.cpuMs() - before, result), scheduling: scheduling() }
        }).pipe(Effect.ensuring(Effect.promise(() => desk.stop())))
        cpu[index]!.push(measured.cpuUs)
        yield* Console.log(
          `${name} round ${round + 1} ${side.name}: ${measured.rps.toFixed(0)} req/s, ` +
            `${measured.cpuUs.toFixed(1)} µs of desk CPU a request, ${measured.errors} errors` +
            (measured.scheduling === undefined
              ? ""
              : `, main thread waiting for a CPU ${(100 * measured.scheduling.mainThreadWaiting).toFixed(0)} %`)
        )
      }
    }
    const ahead = cpu[0]!.filter((value, round) => value < cpu[1]![round]!).length
    yield* Console.log(
      `${name}: median ${median(cpu[0]!).toFixed(1)} µs (this checkout) against ${median(cpu[1]!).toFixed(1)} ` +
        `(base ${args.base}); this checkout cheaper in ${ahead} of ${rounds} rounds`
    )
  }
})

NodeRuntime.runMain(Effect.scoped(program))
