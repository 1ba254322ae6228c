/**
 * Far above any request the desk accepts (its longest list, a filing's provenance.tools, holds 50), far below
 * what makes decoding and its error report costly: every item of a list is decoded, and each wrong one formatted,
 * before the list's length is judged. A filing with four lists of 1,000 wrong items took 68 ms to refuse (4,004
 * issues formatted twice by the platform, then cut to 20), against 4 ms for one wrong field; at 100 items, 8 ms.
 */
export const JSON_LIMITS = { depth: 32, members: 200, items: 100 } as const

/** What is said of a list over JSON_LIMITS.items, refused before its items are decoded. */
export const LONG_LIST = `has more than ${JSON_LIMITS.items} items, far over its maximum`

/** Why a parsed JSON value is too big in shape; `path` names the array when an array is too long. */
export interface ShapeProblem {
  readonly problem: string
  readonly path?: string
}

/**
 * Why a parsed JSON value is too big in shape, if it is; walked without recursion, since the value may
 * nest 500,000 levels deep. Decoding (and formatting the issues of) 100,000 wrong items takes seconds.
 */
export const shapeProblem = (value: unknown): ShapeProblem | undefined => {
  const stack: Array<[unknown, number, string]> = [[value, 1, ""]]
  while (stack.length > 0) {
    const [next, depth, path] = stack.pop()!
    if (typeof next !== "object" || next === null) continue
    if (depth > JSON_LIMITS.depth) return { problem: `nests arrays or objects deeper than ${JSON_LIMITS.depth} levels` }
    const entries = Array.isArray(next) ? next.entries() : Object.entries(next)
    if (Array.isArray(next) && next.length > JSON_LIMITS.items) {
      return { problem: `has an array of more than ${JSON_LIMITS.items} items`, path }
    }
    if (!Array.isArray(next) && Object.keys(next).length > JSON_LIMITS.members) {
      return { problem: `has an object of more than ${JSON_LIMITS.members} members` }
    }
    for (const [key, child] of entries) {
      if (typeof child === "object" && child !== null) {
        stack.push([child, depth + 1, path === "" ? String(key) : `${path}.${key}`])
      }
    }
  }
  return undefined
}
