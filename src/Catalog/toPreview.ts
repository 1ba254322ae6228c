import { DeskId, handoffIdOf } from "../Domain/Ids.ts"
import { FEE_BPS, splitPrice, toUsd } from "../Domain/Money.ts"
import type { Provenance } from "../Domain/Preview.ts"
import type { Preview } from "../Domain/Preview.ts"
import type { HandoffRow } from "./HandoffRow.ts"

export const RECONSTRUCT_NOTE =
  "reconstructUsd is the filer's own estimate of the cost to redo the work; the desk never verifies it."
export const SAVINGS_NOTE =
  "savingsUsd = reconstructUsd - priceUsd: a claim derived from the filer's unverified estimate."

/**
 * unproven_extreme_ratio: the filer claims the work is worth at least 1000 times its price
 * and no buyer has yet marked it useful.
 */
export const EXTREME_RATIO = 1000
const qualityFlags = (row: HandoffRow): Array<"unproven_extreme_ratio"> =>
  row.reconstruct_micro >= row.price_micro * EXTREME_RATIO && row.useful === 0 ? ["unproven_extreme_ratio"] : []

const numberOrNull = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : null)
const text = (value: unknown) => (typeof value === "string" ? value : "")

const provenanceOf = (raw: Record<string, unknown> | null): Provenance | null => {
  if (raw === null) return null
  const durationMs = numberOrNull(raw.durationMs)
  return {
    vendor: text(raw.vendor),
    model: text(raw.model),
    agentName: text(raw.agentName),
    inputTokens: numberOrNull(raw.inputTokens),
    outputTokens: numberOrNull(raw.outputTokens),
    totalTokens: numberOrNull(raw.totalTokens),
    durationMs,
    durationMinutes: numberOrNull(raw.durationMinutes) ?? (durationMs === null ? 0 : durationMs / 60_000),
    contextWindow: numberOrNull(raw.contextWindow),
    tools: Array.isArray(raw.tools) ? raw.tools.filter((_): _ is string => typeof _ === "string") : []
  }
}

const usd = (micros: number) => `$${toUsd(micros)}`

export const toPreview = (row: HandoffRow): Preview => {
  const id = handoffIdOf(row.seq)
  const split = splitPrice(row.price_micro)
  const savings = row.reconstruct_micro - row.price_micro
  const flags = qualityFlags(row)
  const provenance = provenanceOf(row.provenance)
  return {
    id,
    title: row.title,
    teaser: row.teaser,
    tags: row.tags,
    priceUsd: toUsd(row.price_micro),
    reconstructUsd: toUsd(row.reconstruct_micro),
    minutes: row.minutes,
    filer: row.filer,
    filerDid: DeskId.make(row.filer_did),
    filerUrl: `/agents/${row.filer_did}`,
    contains: row.contains,
    doesNotContain: row.does_not_contain,
    whyPay: row.why_pay,
    filedAt: row.filed_at.toISOString(),
    purchases: row.purchases,
    hash: row.hash,
    useful: row.useful,
    notUseful: row.not_useful,
    provenance,
    provenanceMissing: provenance === null,
    reconstructNote: RECONSTRUCT_NOTE,
    bodyChars: row.body_chars,
    savingsUsd: toUsd(savings),
    savingsNote: SAVINGS_NOTE,
    urls: {
      html: `/h/${id}`,
      preview: `/api/handoffs/${id}`,
      unlock: `/api/handoffs/${id}/unlock`,
      body: `/api/handoffs/${id}/body`
    },
    kind: "work",
    origin: row.origin,
    isSeeded: row.origin === "seed",
    qualityFlags: flags,
    feeBps: FEE_BPS,
    feePct: FEE_BPS / 100,
    filerSharePct: 100 - FEE_BPS / 100,
    filerPayoutUsd: toUsd(split.filer),
    deskFeeUsd: toUsd(split.desk),
    ...(flags.length === 0
      ? {
        whyBuy: `The filer claims redoing this work would cost about ${usd(row.reconstruct_micro)}; ` +
          `unlocking costs ${usd(row.price_micro)}, a claimed saving of ${usd(savings)} (unverified).`
      }
      : {})
  }
}
