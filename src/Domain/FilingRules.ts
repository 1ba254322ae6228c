import type { Issue } from "./Errors.ts"
import { comparableText } from "./Text.ts"

export const REQUIRED_SECTIONS = ["Failed approaches", "Recommended next actions"] as const

/** The values GET /api/template fills in for the filer to replace; filed as they are, they describe no one. */
export const PLACEHOLDERS = {
  filer: "your-public-handle",
  filerDid: "did:desk:00000000000000000000000000000000",
  provenance: { vendor: "example-vendor", model: "example-model", agentName: "desk-example" }
} as const

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const FENCE = /^ {0,3}(`{3,}|~{3,})/
const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/

/**
 * The lines of a body that Markdown may render as headings: not inside an HTML comment (an unclosed one runs to the
 * end) nor a fenced code block (``` or ~~~, closed by a fence of the same character at least as long, else running
 * to the end), where a `#` line is text.
 */
const renderedLines = (body: string): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let fence: string | undefined
  for (const line of body.replace(/<!--[\s\S]*?(?:-->|$(?![\s\S]))/g, "").split(/\r\n?|\n/)) {
    if (fence === undefined) {
      fence = FENCE.exec(line)?.[1]
      if (fence === undefined) lines.push(line)
      continue
    }
    const closing = CLOSING_FENCE.exec(line)?.[1]
    if (closing !== undefined && closing[0] === fence[0] && closing.length >= fence.length) fence = undefined
  }
  return lines
}

/**
 * A section is a Markdown heading (`#` to `######` then a space, ATX style, as CommonMark reads one) whose text
 * starts with the name, outside code blocks and HTML comments.
 */
const hasSection = (lines: ReadonlyArray<string>, name: string) => {
  const heading = new RegExp(`^ {0,3}#{1,6}[ \\t]+${escapeRegExp(name)}\\b`, "iu")
  return lines.some((line) => heading.test(line))
}

type Loose = Readonly<Record<string, unknown>>

const isRecord = (value: unknown): value is Loose =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const sameText = (value: unknown, placeholder: string) =>
  typeof value === "string" && value.trim().toLowerCase() === placeholder

const placeholderIssue = (path: string, placeholder: string): Issue => ({
  path,
  message: `is the template's placeholder "${placeholder}": replace it with your own value`
})

/**
 * The rules that span fields or read the body, judged on whatever part of the filing is usable: they run on the
 * decoded filing and, when a field fails its own schema, on the raw input, so one answer lists every issue.
 * Both forms carry the two prices in the same unit (micro-USDC decoded, USD raw), so comparing them holds.
 */
export const filingRuleIssues = (input: unknown): ReadonlyArray<Issue> => {
  if (!isRecord(input)) return []
  const issues: Array<Issue> = []
  const { body, doesNotContain, filer, filerDid, priceUsd, provenance, reconstructUsd } = input
  if (Number.isFinite(priceUsd) && Number.isFinite(reconstructUsd) && Number(reconstructUsd) <= Number(priceUsd)) {
    issues.push({ path: "reconstructUsd", message: "must exceed priceUsd" })
  }
  if (typeof body === "string") {
    const lines = renderedLines(body)
    for (const section of REQUIRED_SECTIONS) {
      if (!hasSection(lines, section)) {
        issues.push({
          path: "body",
          message: `must include a section titled "${section}" (a Markdown heading such as "## ${section}")`
        })
      }
    }
    if (Array.isArray(doesNotContain)) {
      // Compared as a copy is (src/Domain/Text.ts): "Café" holds "cafe\u0301", a line break holds a space.
      const text = comparableText(body)
      doesNotContain.forEach((phrase: unknown, index) => {
        const words = typeof phrase === "string" ? comparableText(phrase) : ""
        if (words !== "" && text.includes(words)) {
          issues.push({ path: `doesNotContain.${index}`, message: `the body contains the phrase "${phrase}"` })
        }
      })
    }
  }
  if (sameText(filer, PLACEHOLDERS.filer)) issues.push(placeholderIssue("filer", PLACEHOLDERS.filer))
  if (sameText(filerDid, PLACEHOLDERS.filerDid)) issues.push(placeholderIssue("filerDid", PLACEHOLDERS.filerDid))
  if (isRecord(provenance)) {
    for (const [field, placeholder] of Object.entries(PLACEHOLDERS.provenance)) {
      if (sameText(provenance[field], placeholder)) issues.push(placeholderIssue(`provenance.${field}`, placeholder))
    }
  }
  return issues
}

/** The one rule that needs the caller: a filing is filed by the identity that sends it. */
export const identityIssues = (filerDid: string, agent: string): ReadonlyArray<Issue> =>
  filerDid === agent ? [] : [{ path: "filerDid", message: "must equal the X-AGENT-ID header" }]

/**
 * The issues of a filing its schema refused (`decoded`), with `identityIssues` first, read from its parsed JSON
 * (`body`) against the identity filing it: so that one 422 lists this rule beside the others. Not where the schema
 * already names `filerDid` (it is no well-formed id then).
 */
export const withIdentityIssues = (
  decoded: ReadonlyArray<Issue>,
  body: unknown,
  agent: string
): ReadonlyArray<Issue> =>
  typeof body === "object" && body !== null && "filerDid" in body && typeof body.filerDid === "string" &&
    !decoded.some((_) => _.path === "filerDid")
    ? [...identityIssues(body.filerDid, agent), ...decoded]
    : decoded
