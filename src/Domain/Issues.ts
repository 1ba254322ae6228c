import type { ParseResult } from "effect"
import type { Issue } from "./Errors.ts"

const ECHO_CHARS = 40

/**
 * Effect's own annotation (internal, used by Schema.maxItems) for a filter that is judged on the raw input even
 * when the schema it refines fails, with `errors: "all"`: the rules of a filing then come in the same answer as
 * its field errors, instead of on the next try.
 */
export const STABLE_FILTER: unique symbol = Symbol.for("effect/annotation/StableFilter") as never

/** A value a client sent, as it reads in a message: strings quoted, long ones cut with their length. */
export const echo = (value: unknown): string => {
  if (typeof value === "string") {
    const points = [...value]
    return points.length <= ECHO_CHARS
      ? JSON.stringify(value)
      : `${JSON.stringify(points.slice(0, ECHO_CHARS).join(""))}… (${points.length} characters)`
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "an invalid date" : value.toISOString()
  if (value === undefined) return "nothing"
  // JSON reads 1e400 as Infinity, which JSON.stringify would echo as null.
  if (typeof value === "number" && !Number.isFinite(value)) return String(value)
  const text = JSON.stringify(value) ?? String(value)
  return text.length <= ECHO_CHARS * 2 ? text : `${text.slice(0, ECHO_CHARS * 2)}…`
}

/** A message annotation that states the rule and echoes what was sent: "must be …; got "x"". */
export const rule = (text: string) => (issue: ParseResult.ParseIssue) => `${text}; got ${echo(issue.actual)}`

/** A rule that also replaces the messages of everything inside (a union reports once, not once per member). */
export const ruleOverAll = (text: string) => (issue: ParseResult.ParseIssue) => ({
  message: `${text}; got ${echo(issue.actual)}`,
  override: true
})

/** The rule of a closed list of values, with the allowed values named once. */
export const oneOf = (values: ReadonlyArray<string>) =>
  ruleOverAll(
    values.length === 1 ? `must be "${values[0]}"` : `must be one of ${values.map((_) => `"${_}"`).join(", ")}`
  )

/** What ParseResult.ArrayFormatter (and so HttpApiDecodeError) lists: one entry per failing schema node. */
export interface FlatIssue {
  readonly _tag: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const DESK_OWNED = new Set([
  "id",
  "hash",
  "purchases",
  "origin",
  "isSeeded",
  "filedAt",
  "useful",
  "notUseful",
  "bodyChars"
])

const DEFAULT_MESSAGE = /^Expected ([\s\S]+), actual ([\s\S]*)$/
const LITERAL = /^"([^"]*)"$/

/** The wording of Effect's default "Expected X": keywords and internal schema names become what a client sends. */
const expectedOf = (expected: string): string => {
  if (expected === "string") return "a string"
  if (expected === "number") return "a number"
  if (expected === "boolean") return "true or false"
  if (expected.startsWith("ReadonlyArray<") || expected.startsWith("readonly [")) return "a JSON array"
  // A struct's identifier (UnlockRequest, FilingRequest) or its rendered shape: the client sent something else.
  if (expected.startsWith("{") || /^[A-Z]\w*$/.test(expected)) return "a JSON object"
  return expected
}

const shorten = (
  formatted: string
) => (formatted.length <= ECHO_CHARS * 2 ? formatted : `${formatted.slice(0, ECHO_CHARS * 2)}…`)

/** Optional and nullable fields add "Expected undefined/null" beside the real failure: it says nothing. */
const isNoise = (issue: FlatIssue) => issue._tag === "Type" && /^Expected (undefined|null), actual /.test(issue.message)

const pathOf = (issue: FlatIssue) => issue.path.map(String).join(".")

/** Where a client reads the fields a request accepts: said beside each field it sent that is not one of them. */
export const SEE_OPENAPI = "see /openapi.json for the accepted fields"
export const SEE_TEMPLATE = "see GET /api/template for the accepted fields"

const unexpected = (path: string, seeAccepted: string): string =>
  DESK_OWNED.has(path)
    ? `unknown field: the desk sets "${path}" itself; leave it out`
    : `unknown field "${path}"; ${seeAccepted}`

/**
 * Every failure of one decode as the desk reports it: one issue per field and rule, with the allowed values of
 * a closed list named once, no internal schema names, and the value sent echoed (shortened). A field that is not
 * one of the request's says where its accepted fields are (`seeAccepted`).
 */
export const issuesOf = (flat: ReadonlyArray<FlatIssue>, seeAccepted = SEE_OPENAPI): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  const literals = new Map<string, { readonly at: number; readonly values: Array<string> }>()
  for (const issue of flat) {
    if (isNoise(issue)) continue
    const path = pathOf(issue)
    if (issue._tag === "Unexpected") {
      issues.push({ path, message: unexpected(path, seeAccepted) })
      continue
    }
    if (issue._tag === "Missing") {
      issues.push({ path, message: "is required" })
      continue
    }
    const fallback = DEFAULT_MESSAGE.exec(issue.message)
    if (fallback === null) {
      issues.push({ path, message: issue.message })
      continue
    }
    const [, expected, actual] = fallback as unknown as [string, string, string]
    const literal = LITERAL.exec(expected)
    if (literal !== null) {
      // A union of literals without a rule of its own fails once per member: gather them into one issue.
      const seen = literals.get(path)
      if (seen) {
        seen.values.push(literal[1]!)
        continue
      }
      literals.set(path, { at: issues.length, values: [literal[1]!] })
      issues.push({ path, message: `got ${shorten(actual)}` })
      continue
    }
    issues.push({ path, message: `must be ${expectedOf(expected)}; got ${shorten(actual)}` })
  }
  for (const [path, { at, values }] of literals) {
    const allowed = values.length === 1 ? `"${values[0]}"` : `one of ${values.map((_) => `"${_}"`).join(", ")}`
    issues[at] = { path, message: `must be ${allowed}; ${issues[at]!.message}` }
  }
  const seen = new Set<string>()
  return issues.map(unechoed).filter((issue) => {
    const key = `${issue.path}\u0000${issue.message}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * A filing's sealed body is what its filer sells: an answer about it says what is wrong, never what it holds; nor
 * does one about the whole request (path ""), which holds the body when it is a list or a string of it.
 */
const UNECHOED_PATHS = new Set(["body", ""])
/** The echo of a string, list or object sent (numbers, such as a count, stay). */
const ECHOED = /; got ["[{].*$/s
const unechoed = (issue: Issue): Issue =>
  UNECHOED_PATHS.has(issue.path) ? { path: issue.path, message: issue.message.replace(ECHOED, "") } : issue

export const describeIssues = (issues: ReadonlyArray<Issue>): string =>
  issues.map((_) => (_.path === "" ? _.message : `${_.path}: ${_.message}`)).join("; ")

const MAX_ISSUES = 20

/** The issues to send and the one-line summary: a 1 MiB body can hold 100,000 wrong items, so the first few. */
export const summarize = (
  all: ReadonlyArray<Issue>
): { readonly issues: ReadonlyArray<Issue>; readonly text: string } => {
  const issues = all.slice(0, MAX_ISSUES)
  return {
    issues,
    text: describeIssues(issues) + (all.length > MAX_ISSUES ? `; and ${all.length - MAX_ISSUES} more` : "")
  }
}
