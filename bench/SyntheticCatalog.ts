import { createHash } from "node:crypto"
import { codePoints } from "../src/Domain/Text.ts"
import { type Prng, streamFor } from "./Random.ts"
import {
  AGENT_NAMES,
  CAUSES,
  DOMAINS,
  FIXES,
  HERRINGS,
  NAME_ROLES,
  nameAt,
  NAMES,
  NEVER_CONTAINS,
  OPTIONAL_SECTIONS,
  type Stack,
  STACKS,
  SYMPTOMS,
  TOOLS,
  TRIGGERS,
  VENDORS
} from "./Vocabulary.ts"

/** Columns of one `handoffs` row as the loader writes them; `seq` is the row's 1-based position. */
export interface SyntheticHandoff {
  readonly seq: number
  readonly title: string
  readonly teaser: string
  readonly body: string
  readonly filer: string
  readonly filerDid: string
  readonly priceMicro: number
  readonly reconstructMicro: number
  readonly minutes: number | null
  readonly tags: ReadonlyArray<string>
  readonly contains: ReadonlyArray<string>
  readonly doesNotContain: ReadonlyArray<string>
  readonly whyPay: string
  readonly provenance: string | null
  readonly hash: string
  readonly bodyChars: number
  readonly filedAt: string
}

const FILERS = 5_000
const FILER_SALT = 0x5f11e5
/** Spend caps default to 10 USD, so a fresh identity can unlock any synthetic handoff. */
export const MAX_PRICE_MICRO = 9_500_000
const FIRST_FILING = Date.UTC(2024, 0, 1)

const filerAt = (seed: number, n: number) => {
  const random = streamFor(seed ^ FILER_SALT, n)
  return { handle: `${random.pick(AGENT_NAMES)}-${n}`, did: `did:desk:${random.hex(32)}` }
}

const sentence = (random: Prng, stack: Stack, part: string) =>
  random.pick([
    `Reproduced the problem on ${stack.name} ${random.pick(stack.versions)} with ${
      random.int(2, 64)
    } workers and a copy of production data.`,
    `The ${part} metrics showed ${random.int(2, 40)}x more activity than the baseline week.`,
    `Logs from ${random.int(3, 30)} hosts were compared over ${random.int(2, 48)} hours of traffic.`,
    `Rolled back the change in staging and the symptom disappeared within ${random.int(1, 30)} minutes.`,
    `A minimal reproduction fits in ${random.int(20, 200)} lines and fails ${random.int(3, 10)} times out of 10.`,
    `The vendor changelog mentions the ${part} behaviour change only in a footnote.`,
    `Profiling showed ${random.int(30, 95)} percent of the time inside the ${part}.`
  ])

const bodyOf = (
  random: Prng,
  stack: Stack,
  part: string,
  cause: string,
  fix: string,
  failed: ReadonlyArray<string>,
  sections: ReadonlyArray<string>
) => {
  const lines: Array<string> = []
  const paragraph = (count: number) => Array.from({ length: count }, () => sentence(random, stack, part)).join(" ")
  for (const section of ["Context", "Objective", "Work performed"].filter((_) => sections.includes(_))) {
    lines.push(`## ${section}`, paragraph(random.int(2, 4)), "")
  }
  lines.push("## Failed approaches", ...failed.map((approach) => `- ${approach}: ${paragraph(1)}`), "")
  if (sections.includes("Decision")) lines.push("## Decision", `Treat it as ${cause} and apply a ${fix}.`, "")
  if (sections.includes("Evidence")) lines.push("## Evidence", paragraph(random.int(2, 3)), "")
  lines.push(
    "## Recommended next actions",
    `1. Apply the ${fix} to the ${part}.`,
    `2. Add a regression test that reproduces ${cause}.`,
    `3. ${paragraph(1)}`,
    ""
  )
  return lines.join("\n")
}

/** Whole cents, as filers price; an occasional near-free listing with a huge claim earns the quality flag. */
const pricesOf = (random: Prng) => {
  const reconstructCents = Math.round(300 * Math.pow(200, random.next()))
  if (random.chance(0.04)) return { priceMicro: 10_000, reconstructMicro: Math.max(1_000, reconstructCents) * 10_000 }
  const cents = Math.max(1, Math.round(reconstructCents * (0.005 + random.next() * 0.025)))
  return { priceMicro: Math.min(cents * 10_000, MAX_PRICE_MICRO), reconstructMicro: reconstructCents * 10_000 }
}

/** The handoff at 0-based `index` of the catalog generated from `seed`. */
export const handoffAt = (seed: number, index: number): SyntheticHandoff => {
  const random = streamFor(seed, index)
  const stack = random.pick(STACKS)
  const version = random.pick(stack.versions)
  const part = random.pick(stack.parts)
  const symptom = random.pick(SYMPTOMS)
  const trigger = random.pick(TRIGGERS)
  const cause = random.pick(CAUSES)
  const herring = random.pick(HERRINGS)
  const fix = random.pick(FIXES)
  const domain = random.pick(DOMAINS)
  const failed = random.some([
    `Blaming ${herring}`,
    `Restarting the ${part}`,
    `Pinning ${stack.name} to the previous version`,
    `Doubling the instance size`,
    `Raising every timeout`,
    `Disabling the ${part}`,
    `Clearing caches`
  ], random.int(2, 4))
  // Long-tail names follow a power law: a few are in thousands of handoffs, most in a handful.
  const name = `${nameAt(Math.floor(Math.pow(NAMES, random.next())) - 1)} ${random.pick(NAME_ROLES)}`
  const title = random.chance(0.5)
    ? `${stack.name} ${version} ${symptom} in the ${name} after ${trigger}: ${cause}, not ${herring}`
    : `${stack.name} ${part}: ${symptom} in the ${name} after ${trigger}`
  const teaser = `${failed.length} failed approaches ruled out (${failed.slice(0, 2).join("; ").toLowerCase()}) ` +
    `and the ${fix} that fixed the ${part}` +
    (random.chance(0.5) ? `: p99 from ${random.int(400, 9000)} ms to ${random.int(20, 390)} ms.` : ".")
  const sections = [
    "Failed approaches",
    "Recommended next actions",
    ...random.some(OPTIONAL_SECTIONS, random.int(1, 4))
  ]
  const body = bodyOf(random, stack, part, cause, fix, failed, sections)
  const filer = filerAt(seed, random.int(0, FILERS - 1))
  const vendor = random.pick(VENDORS)
  const inputTokens = random.int(5_000, 900_000)
  const outputTokens = random.int(500, 60_000)
  const minutes = random.chance(0.7) ? random.int(5, 600) : null
  const provenance = random.chance(0.92)
    ? JSON.stringify({
      vendor: vendor.vendor,
      model: random.pick(vendor.models),
      agentName: random.pick(AGENT_NAMES),
      inputTokens,
      outputTokens,
      totalTokens: inputTokens + outputTokens,
      durationMinutes: minutes ?? random.int(5, 600),
      contextWindow: vendor.context,
      tools: random.some(TOOLS, random.int(1, 4))
    })
    : null
  const tags = [...new Set([...stack.tags, domain, ...(random.chance(0.3) ? [random.pick(DOMAINS)] : [])])]
  return {
    seq: index + 1,
    title,
    teaser,
    body,
    filer: filer.handle,
    filerDid: filer.did,
    ...pricesOf(random),
    minutes,
    tags,
    contains: sections,
    doesNotContain: random.some(NEVER_CONTAINS, random.int(1, 3)),
    whyPay: `Skip ${failed.length} dead ends: the answer is a ${fix}.`,
    provenance,
    hash: createHash("sha256").update(body, "utf8").digest("hex"),
    bodyChars: codePoints(body),
    filedAt: new Date(FIRST_FILING + index * 60_000 + random.int(0, 59_999)).toISOString()
  }
}

const STOPWORDS = new Set(["a", "the", "in", "after", "not", "to", "of", "on", "over", "at"])
const wordsOf = (text: string) =>
  text.toLowerCase().split(/[^a-z0-9.]+/).filter((word) => word.length > 1 && !STOPWORDS.has(word))

/**
 * What agents type before starting work. Mostly (75 %) the problem in front of them, which someone may already
 * have solved: three or four words of an existing title, its named component among them. Some (20 %) describe
 * only the area (a stack and a symptom); a few (5 %) are a single broad word.
 */
export const textQueries = (seed: number, count: number, handoffs: number): Array<string> =>
  Array.from({ length: count }, (_, i) => {
    const random = streamFor(seed ^ 0x0a11e5, i)
    const stack = random.pick(STACKS)
    const kind = random.next()
    if (kind < 0.05) return stack.name.split(" ")[0]!.toLowerCase()
    if (kind < 0.25) return `${stack.name.split(" ")[0]!.toLowerCase()} ${random.pick([...SYMPTOMS, ...stack.parts])}`
    const title = handoffAt(seed, random.int(0, handoffs - 1)).title
    const [named] = /in the (\S+)/.exec(title)?.slice(1) ?? []
    const words = wordsOf(title.split(":")[0]!)
    const picked = random.some(words.filter((word) => word !== named), random.int(2, 3))
    return [...picked, ...(named === undefined ? [] : [named])].join(" ")
  })

export const TAGS: ReadonlyArray<string> = [...new Set(STACKS.flatMap((stack) => stack.tags).concat(DOMAINS))]
