import type { SealedRow } from "../Catalog/HandoffRepo.ts"
import { handoffIdOf } from "../Domain/Ids.ts"
import type { Offer } from "../Settlement.ts"

/** What a buyer is asked to pay for a handoff: its price, sold at its absolute unlock URL. */
export const offerOf = (publicUrl: string, handoff: SealedRow): Offer => {
  const id = handoffIdOf(handoff.seq)
  return {
    handoffId: id,
    title: handoff.title,
    teaser: handoff.teaser,
    priceMicro: handoff.price_micro,
    resource: `${publicUrl}/api/handoffs/${id}/unlock`
  }
}
