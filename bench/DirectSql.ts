import { Effect } from "effect"
import { HandoffRepo } from "../src/Catalog/HandoffRepo.ts"
import type { CatalogQuery } from "../src/Domain/Discover.ts"
import { cpuPerRequest, summarize, type WithCpu } from "./Measure.ts"

/**
 * The floor for discover: the desk's own search (its SQL statements and row decoding, nothing else) on the
 * same driver and pool, by `connections` concurrent clients, with no HTTP, previews or encoding around it. Its CPU
 * per search is this process's while it runs: nothing else works in it meanwhile but the servers' RSS sampler (a
 * read of /proc every 50 ms, a few µs a search).
 */
export const directDiscover = (queries: ReadonlyArray<CatalogQuery>, connections: number, seconds: number) =>
  Effect.gen(function*() {
    const repo = yield* HandoffRepo
    const latencies: Array<number> = []
    let next = 0
    let errors = 0
    const deadline = performance.now() + seconds * 1000
    const client = Effect.gen(function*() {
      while (performance.now() < deadline) {
        const started = performance.now()
        const ok = yield* repo.search(queries[next++ % queries.length]!).pipe(
          Effect.as(true),
          Effect.catchAllCause(() => Effect.succeed(false))
        )
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
  }).pipe(Effect.provide(HandoffRepo.layer))
