import type { Issue } from "./Errors.ts"
import type { FilingRequest } from "./Filing.ts"
import { REQUIRED_SECTIONS } from "./Filing.ts"
import type { DeskId } from "./Ids.ts"

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A section is a Markdown heading (`#` to `######`) or a bold line whose text starts with the name. */
const hasSection = (body: string, name: string) =>
  new RegExp(`^\\s{0,3}(#{1,6}\\s*|\\*\\*)${escapeRegExp(name)}\\b`, "imu").test(body)

/** The rules that span fields or need the caller's identity; field-level rules live in the schema. */
export const filingIssues = (request: FilingRequest, agent: DeskId): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  if (request.filerDid !== agent) {
    issues.push({ path: "filerDid", message: "must equal the X-AGENT-ID header" })
  }
  if (request.reconstructUsd <= request.priceUsd) {
    issues.push({ path: "reconstructUsd", message: "must exceed priceUsd" })
  }
  for (const section of REQUIRED_SECTIONS) {
    if (!hasSection(request.body, section)) {
      issues.push({ path: "body", message: `must include a section titled "${section}" (a Markdown heading)` })
    }
  }
  const body = request.body.toLowerCase()
  request.doesNotContain?.forEach((phrase, index) => {
    if (body.includes(phrase.toLowerCase())) {
      issues.push({ path: `doesNotContain.${index}`, message: `the body contains the phrase "${phrase}"` })
    }
  })
  return issues
}
