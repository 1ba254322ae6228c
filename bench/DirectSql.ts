import { Effect } from "effect"
import { HandoffRepo } from "../src/Catalog/HandoffRepo.ts"
import type { CatalogQuery } from "../src/Domain/Discover.ts"
import { cpuPerRequest, summarize, type WithCpu } from "./Measure.ts"

/**
 * `connections` clients each running `attempt` again as soon as it ends, for `seconds`: its latencies (when it
 * answers true), its errors (false or a failure), and this process's CPU per success. Nothing else works in this
 * process meanwhile but the servers' RSS sampler (a read of /proc every 50 ms, a few µs an attempt).
 */
export const closedLoop = <R>(attempt: Effect.Effect<boolean, unknown, R>, connections: number, seconds: number) =>
  Effect.gen(function*() {
    const latencies: Array<number> = []
    let errors = 0
    const deadline = performance.now() + seconds * 1000
    const client = Effect.gen(function*() {
      while (performance.now() < deadline) {
        const started = performance.now()
        const ok = yield* attempt.pipe(Effect.catchAllCause(() => Effect.succeed(false)))
        if (ok) latencies.push(performance.now() - started)
        else errors++
      }
    })
    const started = performance.now()
    const cpuBefore = process.cpuUsage()
    yield* Effect.all(Array.from({ length: connections }, () => client), { concurrency: "unbounded" })
    const measured = summarize(latencies, errors, (performance.now() - started) / 1000)
    const cpu = process.cpuUsage(cpuBefore)
    return { ...measured, cpuMsPerRequest: cpuPerRequest((cpu.user + cpu.system) / 1000, measured) } satisfies WithCpu
  })

/**
 * The floor for discover: the desk's own search (its SQL statements and row decoding, nothing else) on the
 * same driver and pool, by `connections` concurrent clients, with no HTTP, previews or encoding around it. Its CPU
 * per search is this process's while it runs.
 */
export const directDiscover = (queries: ReadonlyArray<CatalogQuery>, connections: number, seconds: number) =>
  Effect.gen(function*() {
    const repo = yield* HandoffRepo
    let next = 0
    const search = Effect.suspend(() => Effect.as(repo.search(queries[next++ % queries.length]!), true))
    return yield* closedLoop(search, connections, seconds)
  }).pipe(Effect.provide(HandoffRepo.layer))
