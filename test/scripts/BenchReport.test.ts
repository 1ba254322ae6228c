import { describe, expect, it } from "vitest"
import type { Measured, WithCpu } from "../../bench/Measure.ts"
import { machineTicks, mainThreadMs } from "../../bench/Processes.ts"
import {
  checksOf,
  referenceOf,
  scenarioLine,
  type ScenarioResult,
  schedulingOf,
  watchScheduling
} from "../../bench/Report.ts"

const measured = (rps: number): Measured => ({ requests: rps * 10, seconds: 10, rps, p50Ms: 1, p99Ms: 2, errors: 0 })
const withCpu = (rps: number, cpuMsPerRequest: number): WithCpu => ({ ...measured(rps), cpuMsPerRequest })
const row = (name: ScenarioResult["name"], rps: number, cpu: number, beside?: number): ScenarioResult => ({
  name,
  title: name,
  ...measured(rps),
  peakRssMb: 100,
  deskCpuMsPerRequest: cpu,
  ...(beside === undefined ? {} : { emptyHttpApiBeside: withCpu(beside, 0.1) })
})
const references = {
  directSqlDiscoverText: withCpu(500, 2),
  directSqlDiscoverTag: withCpu(400, 1),
  bareNodeHttp: measured(50_000),
  // Taken once at the start, on a moment when the host was slow.
  emptyHttpApi: withCpu(4_000, 0.25)
}

describe("the bench's ratios", () => {
  it("judge a scenario by the empty endpoint measured beside it when it was, else by the run's", () => {
    const results = [row("status", 4_000, 0.2, 8_000), row("llms", 4_000, 0.2), row("discover-text", 250, 3, 8_000)]
    const checks = checksOf(results, references, { peakRssMb: 100, startupMs: 1, workers: 1 }, {
      balanced: true,
      receiptsAdded: 0
    }, undefined)
    expect(checks.statusVsEmptyHttpApi).toBe(0.5)
    expect(checks.statusCpuVsEmptyHttpApi).toBeCloseTo(2)
    expect(checks.llmsVsEmptyHttpApi).toBe(1)
    expect(checks.llmsCpuVsEmptyHttpApi).toBeCloseTo(0.8)
    // Discover is judged by its own SQL, whatever was measured beside it.
    expect(checks.discoverTextVsDirectSql).toBe(0.5)
    expect(scenarioLine(results[0]!, referenceOf("status", references, results[0]!)))
      .toContain("50 % of empty HttpApi beside it (CPU 2.00x)")
  })

  it("show what the load generator spent a request beside the desk's CPU, where it was measured", () => {
    expect(scenarioLine({ ...row("llms", 4_000, 0.09), loadCpuMsPerRequest: 0.0437 }))
      .toContain("desk CPU 0.09 ms/req (load generator 0.044)")
    // An open-loop load measures no load generator's CPU.
    expect(scenarioLine(row("llms", 4_000, 0.09))).not.toContain("load generator")
  })

  it("judge discover by its direct SQL measured beside it when it was, else by the run's", () => {
    const tag: ScenarioResult = { ...row("discover-tag", 300, 2), directSqlBeside: withCpu(600, 1.6) }
    const text = row("discover-text", 300, 2)
    const checks = checksOf([tag, text], references, { peakRssMb: 100, startupMs: 1, workers: 1 }, {
      balanced: true,
      receiptsAdded: 0
    }, undefined)
    expect(checks.discoverTagVsDirectSql).toBe(0.5)
    expect(checks.discoverTextVsDirectSql).toBe(0.6)
    // The desk's CPU a page over its search's own, from the same measurement as the throughput.
    expect(checks.discoverTagCpuVsDirectSql).toBeCloseTo(1.25)
    expect(checks.discoverTextCpuVsDirectSql).toBeCloseTo(1)
    expect(scenarioLine(tag, referenceOf("discover-tag", references, tag)))
      .toContain("50 % of direct SQL beside it (CPU 1.25x)")
    expect(scenarioLine(text, referenceOf("discover-text", references, text))).toContain("60 % of direct SQL")
  })
})

describe("the bench's scheduling figures", () => {
  it("give the main thread's time on a CPU and waiting for one as shares of the wall time, and the idle cores'", () => {
    const scheduling = schedulingOf(
      { before: { onCpuMs: 1_000, waitingMs: 200 }, after: { onCpuMs: 4_350, waitingMs: 1_800 } },
      { before: { total: 10_000, idle: 3_000 }, after: { total: 11_000, idle: 3_170 } },
      5_000
    )
    expect(scheduling).toEqual({ mainThreadOnCpu: 0.67, mainThreadWaiting: 0.32, machineIdle: 0.17 })
    expect(scenarioLine({ ...row("unlock-body", 1_200, 0.7), scheduling: scheduling! }))
      .toContain("main thread on CPU 67 %, waiting for one 32 %, machine idle 17 %")
    // Where /proc could not be read there is nothing to report.
    const thread = { onCpuMs: 1_000, waitingMs: 200 }
    const machine = { total: 10_000, idle: 3_000 }
    expect(schedulingOf({ before: thread, after: undefined }, { before: machine, after: machine }, 5_000))
      .toBeUndefined()
    const none = { total: 0, idle: 0 }
    expect(schedulingOf({ before: thread, after: thread }, { before: none, after: none }, 5_000)).toBeUndefined()
  })

  it.skipIf(process.platform !== "linux")(
    "read this process's main thread and the machine from /proc (Linux only)",
    () => {
      // The wall clock and the process's CPU are read first and last, so their windows hold the thread's: on a
      // busy host the thread may wait for a CPU between two reads, and that wait must fall inside the wall time.
      const started = performance.now()
      const cpu = process.cpuUsage()
      const thread = mainThreadMs(process.pid)!
      const machine = machineTicks()
      const watched = watchScheduling({ mainThread: () => mainThreadMs(process.pid) })
      // Busy on the process's main thread (vitest runs tests in forks, vitest.config.ts) until it has had 50 ms of
      // a CPU, however busy the machine is.
      let after = mainThreadMs(process.pid)!
      while (after.onCpuMs - thread.onCpuMs < 50 && performance.now() - started < 10_000) {
        after = mainThreadMs(process.pid)!
      }
      const used = process.cpuUsage(cpu)
      const wallMs = performance.now() - started
      expect(after.onCpuMs - thread.onCpuMs).toBeGreaterThanOrEqual(50)
      // Its time on a CPU is most of the process's CPU time meanwhile (compiler and collector threads aside),
      // whatever the time it waited for one.
      const usedMs = (used.user + used.system) / 1000
      expect(after.onCpuMs - thread.onCpuMs).toBeLessThanOrEqual(usedMs + 10)
      expect(after.onCpuMs - thread.onCpuMs).toBeGreaterThanOrEqual(0.5 * usedMs - 10)
      expect(after.waitingMs).toBeGreaterThanOrEqual(thread.waitingMs)
      // Never idle meanwhile, the thread was on a CPU or waiting for one: together no more than the wall time (the
      // kernel brings its counts up to date at least every scheduler tick).
      expect(after.onCpuMs - thread.onCpuMs + after.waitingMs - thread.waitingMs).toBeLessThanOrEqual(wallMs + 10)
      // The same as shares of the wall time, as the bench reports them.
      const split = watched()!
      expect(split.mainThreadOnCpu).toBeGreaterThan(0)
      expect(split.mainThreadOnCpu + split.mainThreadWaiting).toBeLessThanOrEqual(1 + 10 / wallMs)
      expect(split.machineIdle).toBeGreaterThanOrEqual(0)
      expect(split.machineIdle).toBeLessThan(1)
      const later = machineTicks()
      expect(later.total).toBeGreaterThan(machine.total)
      expect(later.idle).toBeGreaterThanOrEqual(machine.idle)
    }
  )
})
