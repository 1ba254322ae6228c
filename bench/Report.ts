import { mkdirSync, writeFileSync } from "node:fs"
import { cpus, totalmem } from "node:os"
import { join } from "node:path"
import type { Measured, WithCpu } from "./Measure.ts"
import { type MachineTicks, machineTicks, type MainThread, type Server } from "./Processes.ts"
import type { Scaling } from "./Scaling.ts"
import type { ScenarioName } from "./Scenarios.ts"

export interface ScenarioResult extends Measured {
  readonly name: ScenarioName
  readonly title: string
  readonly peakRssMb: number
  /** CPU time the desk process spent per answered request. */
  readonly deskCpuMsPerRequest: number
  readonly unlocksPerSecond?: number
  /**
   * The empty HttpApi endpoint measured right before this scenario (closed loop), which its ratios use: on a
   * shared host the ceiling moves by tens of percent within minutes, so a reference taken once at the start
   * judges later scenarios against another machine.
   */
  readonly emptyHttpApiBeside?: WithCpu
  /**
   * Discover's direct SQL measured right before this scenario (closed loop, PostgreSQL), which its ratio uses: the
   * reference taken at the start moved 785-1,059 text searches/s between runs of one session on one machine.
   */
  readonly directSqlBeside?: WithCpu
  /** Where the desk's JavaScript thread spent the measured seconds (one desk process, Linux only). */
  readonly scheduling?: Scheduling
}

/**
 * Shares of the measured wall time: the desk process's main thread (where all its JavaScript runs) on a CPU, and
 * runnable but waiting for one; and of every core's time, how much sat idle. A thread that waits while cores idle
 * is held back by the scheduler, not by its own work: on a host that also runs PostgreSQL and the load generator,
 * each statement the desk sends wakes a backend that can take the desk's core for the statement's length.
 */
export interface Scheduling {
  readonly mainThreadOnCpu: number
  readonly mainThreadWaiting: number
  readonly machineIdle: number
}

/** The scheduling figures between two readings `wallMs` apart; none where a reading failed or nothing moved. */
export const schedulingOf = (
  thread: { readonly before: MainThread | undefined; readonly after: MainThread | undefined },
  machine: { readonly before: MachineTicks; readonly after: MachineTicks },
  wallMs: number
): Scheduling | undefined => {
  const ticks = machine.after.total - machine.before.total
  const { after, before } = thread
  if (before === undefined || after === undefined || ticks <= 0 || wallMs <= 0) return undefined
  return {
    mainThreadOnCpu: (after.onCpuMs - before.onCpuMs) / wallMs,
    mainThreadWaiting: (after.waitingMs - before.waitingMs) / wallMs,
    machineIdle: (machine.after.idle - machine.before.idle) / ticks
  }
}

/** Reads `server`'s main thread and the machine now; the function it returns gives the split since then. */
export const watchScheduling = (server: Pick<Server, "mainThread">) => {
  // The wall clock first (and last below), so its window holds the counters': a wait for a CPU between two reads
  // falls inside the wall time it is a share of.
  const before = { wall: performance.now(), thread: server.mainThread(), machine: machineTicks() }
  return () =>
    schedulingOf(
      { before: before.thread, after: server.mainThread() },
      { before: before.machine, after: machineTicks() },
      performance.now() - before.wall
    )
}

export interface References {
  readonly directSqlDiscoverText: WithCpu
  readonly directSqlDiscoverTag: WithCpu
  /** Unlock + body's own statements, run directly on the bench's pool before the desk starts (closed loop). */
  readonly directSqlUnlockBody?: WithCpu
  readonly bareNodeHttp: Measured
  /** One HttpApi endpoint that does nothing, on the desk's server: the most any desk route can reach. */
  readonly emptyHttpApi: WithCpu
}

export const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)
const fixed = (n: number | null, digits = 1) => (n === null ? "n/a" : n.toFixed(digits))
const pct = (ratio: number | null) => (ratio === null ? "n/a" : `${(100 * ratio).toFixed(0)} %`)

/** Whether a scenario is judged against the empty HttpApi endpoint (discover is judged against its own SQL). */
export const judgedByEmptyHttpApi = (name: ScenarioName) => name !== "discover-text" && name !== "discover-tag"

/**
 * The reference a scenario's throughput is judged against: discover against its own SQL, the rest the ceiling,
 * measured beside the scenario when it was.
 */
export const referenceOf = (
  name: ScenarioName,
  references: Omit<References, "bareNodeHttp">,
  beside: Pick<ScenarioResult, "emptyHttpApiBeside" | "directSqlBeside"> = {}
): { label: string; measured: Measured; cpuMsPerRequest?: number } => {
  if (name === "discover-text" || name === "discover-tag") {
    const atStart = name === "discover-text" ? references.directSqlDiscoverText : references.directSqlDiscoverTag
    const direct = beside.directSqlBeside ?? atStart
    return {
      label: beside.directSqlBeside === undefined ? "direct SQL" : "direct SQL beside it",
      measured: direct,
      cpuMsPerRequest: direct.cpuMsPerRequest
    }
  }
  const empty = beside.emptyHttpApiBeside
  return {
    label: empty === undefined ? "empty HttpApi" : "empty HttpApi beside it",
    measured: empty ?? references.emptyHttpApi,
    cpuMsPerRequest: (empty ?? references.emptyHttpApi).cpuMsPerRequest
  }
}

export const scenarioLine = (
  row: ScenarioResult,
  reference?: { label: string; measured: Measured; cpuMsPerRequest?: number }
) =>
  `  ${row.title.padEnd(32)} ${fixed(row.rps, 0).padStart(7)} req/s  p50 ${fixed(row.p50Ms).padStart(6)} ms  ` +
  `p99 ${fixed(row.p99Ms).padStart(6)} ms  errors ${row.errors}  peak RSS ${row.peakRssMb} MB  ` +
  `desk CPU ${fixed(row.deskCpuMsPerRequest, 2)} ms/req` +
  (row.loadCpuMsPerRequest === undefined ? "" : ` (load generator ${fixed(row.loadCpuMsPerRequest, 3)})`) +
  (reference === undefined ? "" : `  ${pct(row.rps / reference.measured.rps)} of ${reference.label}`) +
  (reference?.cpuMsPerRequest === undefined
    ? ""
    : ` (CPU ${fixed(row.deskCpuMsPerRequest / reference.cpuMsPerRequest, 2)}x)`) +
  (row.unlocksPerSecond === undefined ? "" : `  (${fixed(row.unlocksPerSecond, 0)} unlocks/s)`) +
  (row.scheduling === undefined
    ? ""
    : `  main thread on CPU ${pct(row.scheduling.mainThreadOnCpu)}, waiting for one ${
      pct(row.scheduling.mainThreadWaiting)
    }, machine idle ${pct(row.scheduling.machineIdle)}`) +
  (row.failures === undefined ? "" : `  failures ${JSON.stringify(row.failures)}`)

/**
 * Each target of issue #16 beside the figure it is judged by; ratios use references from the same run (the empty
 * endpoint's and discover's direct SQL from right before each scenario, when they were measured there). With an
 * offered rate (open loop) throughput ratios say nothing, so only latencies at that rate are judged.
 */
export const checksOf = (
  results: ReadonlyArray<ScenarioResult>,
  references: References,
  desk: {
    readonly peakRssMb: number
    readonly startupMs: number
    readonly workers: number
    /** The comparison of one desk process with several, when the run made it. */
    readonly scaling?: Scaling | undefined
  },
  books: { readonly balanced: boolean; readonly receiptsAdded: number },
  rate: number | undefined
) => {
  const get = (name: ScenarioName) => results.find((_) => _.name === name)
  const ratio = (name: ScenarioName) => {
    const row = get(name)
    return row === undefined || rate !== undefined
      ? null
      : row.rps / referenceOf(name, references, row).measured.rps
  }
  // "Costs at most 25 % more than the empty endpoint": the desk's CPU per request over the reference's (for
  // discover, over its search's own CPU on the bench's side).
  const cost = (name: ScenarioName) => {
    const row = get(name)
    const reference = row === undefined ? undefined : referenceOf(name, references, row).cpuMsPerRequest
    return row === undefined || rate !== undefined || reference === undefined
      ? null
      : row.deskCpuMsPerRequest / reference
  }
  return {
    offeredRate: rate ?? null,
    workers: desk.workers,
    llmsVsEmptyHttpApi: ratio("llms"),
    statusVsEmptyHttpApi: ratio("status"),
    previewVsEmptyHttpApi: ratio("preview"),
    llmsCpuVsEmptyHttpApi: cost("llms"),
    statusCpuVsEmptyHttpApi: cost("status"),
    previewCpuVsEmptyHttpApi: cost("preview"),
    discoverTextVsDirectSql: ratio("discover-text"),
    discoverTagVsDirectSql: ratio("discover-tag"),
    discoverTextCpuVsDirectSql: cost("discover-text"),
    discoverTagCpuVsDirectSql: cost("discover-tag"),
    discoverTextP99Ms: get("discover-text")?.p99Ms ?? null,
    demandP99Ms: get("demand")?.p99Ms ?? null,
    booksP99Ms: get("books")?.p99Ms ?? null,
    scalingWorkers: desk.scaling?.workers ?? null,
    workersSpeedup: desk.scaling?.speedup ?? null,
    unlocksPerSecond: rate === undefined ? get("unlock-body")?.unlocksPerSecond ?? null : null,
    unlockErrors: get("unlock-body")?.errors ?? null,
    directUnlocksPerSecond: references.directSqlUnlockBody?.rps ?? null,
    booksBalanced: books.balanced,
    receiptsAdded: books.receiptsAdded,
    peakRssMb: desk.peakRssMb,
    startupMs: Math.round(desk.startupMs),
    emptyHttpApiRps: references.emptyHttpApi.rps,
    bareNodeHttpRps: references.bareNodeHttp.rps
  }
}
export type Checks = ReturnType<typeof checksOf>

export const summary = (checks: Checks) =>
  [
    "",
    `ceiling:        empty HttpApi ${fixed(checks.emptyHttpApiRps, 0)} req/s, bare node:http ${
      fixed(checks.bareNodeHttpRps, 0)
    } req/s` + (checks.workers > 1 ? ` (references run one process; the desk ran ${checks.workers} workers)` : ""),
    ...(checks.offeredRate === null
      ? [
        `no database:    /llms.txt ${pct(checks.llmsVsEmptyHttpApi)}, /api/status ${
          pct(checks.statusVsEmptyHttpApi)
        } of empty HttpApi (target >= 80 %); CPU per request ${fixed(checks.llmsCpuVsEmptyHttpApi, 2)}x, ${
          fixed(checks.statusCpuVsEmptyHttpApi, 2)
        }x its own (target <= 1.25x)`,
        `preview:        ${pct(checks.previewVsEmptyHttpApi)} of empty HttpApi (target >= 60 %); CPU per request ${
          fixed(checks.previewCpuVsEmptyHttpApi, 2)
        }x its own`,
        `discover:       text ${pct(checks.discoverTextVsDirectSql)}, tag ${
          pct(checks.discoverTagVsDirectSql)
        } of direct SQL (target >= 85 %); CPU per page ${fixed(checks.discoverTextCpuVsDirectSql, 2)}x, ${
          fixed(checks.discoverTagCpuVsDirectSql, 2)
        }x its search's`,
        `unlock + body:  ${fixed(checks.unlocksPerSecond, 0)} unlocks/s (target >= 800), ${
          checks.unlockErrors ?? "n/a"
        } errors, books ${
          checks.booksBalanced ? "balanced" : "NOT balanced"
        }, ${checks.receiptsAdded} receipts added; ` +
        `its statements alone ${fixed(checks.directUnlocksPerSecond, 0)} unlocks/s`,
        `workers:        ${
          checks.workersSpeedup === null
            ? "n/a"
            : `${checks.scalingWorkers} processes ${fixed(checks.workersSpeedup, 2)}x one on /llms.txt`
        } (target >= 1.4x with 2)`
      ]
      : [
        `offered load:   ${checks.offeredRate} req/s per scenario (open loop)`,
        `discover text:  p99 ${fixed(checks.discoverTextP99Ms)} ms (target <= 100 at 100 req/s)`,
        `demand, books:  p99 ${fixed(checks.demandP99Ms)} ms, ${fixed(checks.booksP99Ms)} ms (target <= 20)`,
        `books:          ${checks.booksBalanced ? "balanced" : "NOT balanced"}, ${checks.receiptsAdded} receipts added`
      ]),
    `desk:           peak RSS ${checks.peakRssMb} MB (target < 300 embedded), startup ${checks.startupMs} ms`
  ].join("\n")

/** What the scaling comparison found, or why it did not run. */
export const scalingLine = (scaleTo: number, scaling: Scaling | undefined) => {
  if (scaling === undefined) {
    return scaleTo > 1
      ? "workers: not compared (needs PostgreSQL and Redis: DATABASE_URL, REDIS_URL; closed loop only)"
      : "workers: not compared (a full run or --scaling 2 compares one process with two)"
  }
  const rps = (side: "one" | "many") => scaling.rounds.map((round) => round[side].rps.toFixed(0)).join(", ")
  const cpu = (side: "one" | "many") => scaling.rounds.map((round) => round[side].cpuMsPerRequest.toFixed(3)).join(", ")
  const rounds = scaling.rounds.map((round) => `${(round.many.rps / round.one.rps).toFixed(2)}x`).join(", ")
  const load = (side: "one" | "many") =>
    scaling.rounds.map((round) => fixed(round[side].loadCpuMsPerRequest ?? null, 3)).join(", ")
  const idle = (side: "one" | "many") => scaling.rounds.map((round) => pct(round[side].machineIdle ?? null)).join(", ")
  return [
    `workers: ${scaling.route}, one process ${rps("one")} req/s (CPU ${cpu("one")} ms/req), ` +
    `${scaling.workers} workers ${rps("many")} req/s (CPU ${cpu("many")} ms/req)`,
    `  load generator CPU: one process ${load("one")} ms/req, ${scaling.workers} workers ${load("many")} ms/req; ` +
    `machine idle: one process ${idle("one")}, ${scaling.workers} workers ${idle("many")}`,
    `  ${scaling.speedup.toFixed(2)}x one process, the median round (rounds ${rounds}, order swapped each round)`
  ].join("\n")
}

/** bench/results/<start time>.json: the options, every figure and the machine it ran on. */
export const writeResults = (dir: string, startedAt: Date, content: Record<string, unknown>) => {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${startedAt.toISOString().replace(/[:.]/g, "-")}.json`)
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryMb: mb(totalmem()), node: process.version }
  writeFileSync(file, JSON.stringify({ startedAt: startedAt.toISOString(), machine, ...content }, null, 2) + "\n")
  return file
}
