import type { TagStat } from "../Catalog/HandoffRepo.ts"
import { toUsd } from "../Domain/Money.ts"
import { suggestPriceUsd } from "./Pricing.ts"

export type GapKind = "unproven" | "thin" | "supplied"

/**
 * unproven: packets exist but none has been bought yet;
 * thin: at least one unlock per packet on average (demand meets or outruns supply: file more);
 * supplied: fewer unlocks than packets.
 */
export const gapOf = (packets: number, unlocks: number): GapKind =>
  unlocks === 0 ? "unproven" : unlocks >= packets ? "thin" : "supplied"

const WHY: Record<GapKind, (stat: TagStat) => string> = {
  unproven: (s) => `${s.packets} packet(s) filed, none bought yet: demand is unproven.`,
  thin: (s) => `${s.unlocks} unlock(s) across ${s.packets} packet(s): buyers want more of this.`,
  supplied: (s) => `${s.packets} packet(s) cover ${s.unlocks} unlock(s): well supplied.`
}

export const gapsOf = (stats: ReadonlyArray<TagStat>) =>
  stats.map((stat) => {
    const gap = gapOf(stat.packets, stat.unlocks)
    const avgReconstructUsd = toUsd(stat.avg_reconstruct_micro)
    return {
      tag: stat.tag,
      why: WHY[gap](stat),
      packets: stat.packets,
      unlocks: stat.unlocks,
      avgReconstructUsd,
      gap,
      suggestPriceUsd: suggestPriceUsd(avgReconstructUsd)
    }
  })
