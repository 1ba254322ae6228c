import { mkdirSync, writeFileSync } from "node:fs"
import { cpus, totalmem } from "node:os"
import { join } from "node:path"
import type { Measured } from "./Measure.ts"
import type { ScenarioName } from "./Scenarios.ts"

export interface ScenarioResult extends Measured {
  readonly name: ScenarioName
  readonly title: string
  readonly peakRssMb: number
  /** CPU time the desk process spent per answered request. */
  readonly deskCpuMsPerRequest: number
  readonly unlocksPerSecond?: number
}

export interface References {
  readonly directSqlDiscoverText: Measured
  readonly directSqlDiscoverTag: Measured
  readonly bareNodeHttp: Measured
}

export const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)
const fixed = (n: number | null, digits = 1) => (n === null ? "n/a" : n.toFixed(digits))
const pct = (ratio: number | null) => (ratio === null ? "n/a" : `${(100 * ratio).toFixed(0)} %`)

export const scenarioLine = (row: ScenarioResult) =>
  `  ${row.title.padEnd(32)} ${fixed(row.rps, 0).padStart(7)} req/s  p50 ${fixed(row.p50Ms).padStart(6)} ms  ` +
  `p99 ${fixed(row.p99Ms).padStart(6)} ms  errors ${row.errors}  peak RSS ${row.peakRssMb} MB  ` +
  `desk CPU ${fixed(row.deskCpuMsPerRequest, 2)} ms/req` +
  (row.unlocksPerSecond === undefined ? "" : `  (${fixed(row.unlocksPerSecond, 0)} unlocks/s)`) +
  (row.failures === undefined ? "" : `  failures ${JSON.stringify(row.failures)}`)

/** Each target of issue #7 beside the figure it is judged by; ratios use references from the same run. */
export const checksOf = (
  results: ReadonlyArray<ScenarioResult>,
  references: References,
  desk: { readonly peakRssMb: number; readonly startupMs: number },
  books: { readonly balanced: boolean; readonly receiptsAdded: number }
) => {
  const get = (name: ScenarioName) => results.find((_) => _.name === name)
  const ratio = (name: ScenarioName, reference: Measured) => {
    const row = get(name)
    return row === undefined ? null : row.rps / reference.rps
  }
  return {
    discoverTextP99Ms: get("discover-text")?.p99Ms ?? null,
    discoverTextVsDirectSql: ratio("discover-text", references.directSqlDiscoverText),
    discoverTagVsDirectSql: ratio("discover-tag", references.directSqlDiscoverTag),
    previewVsBareHttp: ratio("preview", references.bareNodeHttp),
    unlocksPerSecond: get("unlock-body")?.unlocksPerSecond ?? null,
    unlockErrors: get("unlock-body")?.errors ?? null,
    booksBalanced: books.balanced,
    receiptsAdded: books.receiptsAdded,
    peakRssMb: desk.peakRssMb,
    startupMs: Math.round(desk.startupMs)
  }
}
export type Checks = ReturnType<typeof checksOf>

export const summary = (checks: Checks) =>
  [
    "",
    `discover text:  p99 ${fixed(checks.discoverTextP99Ms)} ms (target < 50), ` +
    `${pct(checks.discoverTextVsDirectSql)} of direct SQL (target >= 50 %)`,
    `discover tag:   ${pct(checks.discoverTagVsDirectSql)} of direct SQL`,
    `preview:        ${pct(checks.previewVsBareHttp)} of bare node:http (target >= 25 %)`,
    `unlock + body:  ${fixed(checks.unlocksPerSecond, 0)} unlocks/s (target >= 500), ${
      checks.unlockErrors ?? "n/a"
    } errors, ` +
    `books ${checks.booksBalanced ? "balanced" : "NOT balanced"}, ${checks.receiptsAdded} receipts added`,
    `desk:           peak RSS ${checks.peakRssMb} MB (target < 250), startup ${checks.startupMs} ms (target < 2000)`
  ].join("\n")

/** bench/results/<start time>.json: the options, every figure and the machine it ran on. */
export const writeResults = (dir: string, startedAt: Date, content: Record<string, unknown>) => {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${startedAt.toISOString().replace(/[:.]/g, "-")}.json`)
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryMb: mb(totalmem()), node: process.version }
  writeFileSync(file, JSON.stringify({ startedAt: startedAt.toISOString(), machine, ...content }, null, 2) + "\n")
  return file
}
