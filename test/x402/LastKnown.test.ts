import { describe, expect, it } from "vitest"
import { lastKnown } from "../../adapters/settlement/LastKnown.ts"

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A probe that counts its calls and answers when told to. */
const controlled = () => {
  const pending: Array<(value: boolean) => void> = []
  let calls = 0
  return {
    probe: () => {
      calls++
      return new Promise<boolean>((resolve) => pending.push(resolve))
    },
    answer: (value: boolean) => pending.shift()!(value),
    calls: () => calls
  }
}

/**
 * /api/status answers whether the facilitator answers. Asked of the facilitator on every poll, status cost an
 * outbound call a request (a hosted facilitator's quota spent by whoever polls) and waited up to the RPC timeout
 * for a hanging one.
 */
describe("a reachability probe as last known", () => {
  it("asks once however many poll, keeps the answer while fresh, then refreshes behind the kept one", async () => {
    const { answer, calls, probe } = controlled()
    const reachable = lastKnown(probe, 50, 1_000)
    const first = Promise.all(Array.from({ length: 100 }, reachable))
    expect(calls()).toBe(1)
    answer(true)
    expect(new Set(await first)).toEqual(new Set([true]))
    for (let i = 0; i < 100; i++) expect(await reachable()).toBe(true)
    expect(calls()).toBe(1)

    await tick(60)
    // Stale: answered at once with the kept answer, one probe refreshing it, however many ask meanwhile.
    for (let i = 0; i < 100; i++) expect(await reachable()).toBe(true)
    expect(calls()).toBe(2)
    answer(false)
    await tick(0)
    expect(await reachable()).toBe(false)
    expect(calls()).toBe(2)
  })

  it("a probe that hangs is false after the timeout, and one that throws is false", async () => {
    const hanging = lastKnown(() => new Promise<boolean>(() => {}), 50, 30)
    const started = Date.now()
    expect(await hanging()).toBe(false)
    expect(Date.now() - started).toBeLessThan(1_000)
    // The hanging probe no longer counts as running: the next stale poll starts another.
    let calls = 0
    const failing = lastKnown(
      () => {
        calls++
        return Promise.reject(new Error("connection refused"))
      },
      10,
      1_000
    )
    expect(await failing()).toBe(false)
    await tick(20)
    expect(await failing()).toBe(false)
    await tick(0)
    expect(calls).toBe(2)
  })
})
