/** mulberry32: a tiny, fast PRNG; the same seed gives the same catalog on every machine. */
export const prng = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!
  const chance = (p: number) => next() < p
  /** Distinct items, in pool order. */
  const some = <A>(items: ReadonlyArray<A>, count: number): Array<A> => {
    const chosen = new Set<number>()
    while (chosen.size < Math.min(count, items.length)) chosen.add(Math.floor(next() * items.length))
    return [...chosen].sort((a, b) => a - b).map((i) => items[i]!)
  }
  const hex = (chars: number) => {
    let out = ""
    while (out.length < chars) out += Math.floor(next() * 4294967296).toString(16).padStart(8, "0")
    return out.slice(0, chars)
  }
  return { next, int, pick, chance, some, hex }
}
export type Prng = ReturnType<typeof prng>

/** One independent stream per (seed, index), so any row can be generated alone and in any order. */
export const streamFor = (seed: number, index: number) => {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35)
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d)
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b)
  return prng((h ^ (h >>> 16)) >>> 0)
}
