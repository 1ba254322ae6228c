import { Schema } from "effect"
import { rule } from "./Issues.ts"

export const ReceiptKind = Schema.Literal("sale", "demo", "self").annotations({
  description: "sale counts in totals and spend; demo (sandbox packet) and self (a filer's own handoff) do not, " +
    "and owe the filer nothing"
})
export type ReceiptKind = typeof ReceiptKind.Type

export const PayoutStatus = Schema.Literal("ledger", "owed", "pending", "sent", "failed", "zero").annotations({
  description: "Where the filer's share stands. ledger: a desk-receipt sale; the share is recorded in the ledger " +
    "and never moves on-chain (a desk receipt moves no USDC). owed: an x402 sale whose share waits for the filer's " +
    "payoutAddress (or the desk wallet), then is paid by the payout worker. pending: being paid on-chain. sent: paid " +
    "(filerPayoutTxHash). failed: the last attempt failed; it is retried. zero: nothing is owed (filerPayoutUsd 0: a " +
    "self-purchase, the demo packet, or a share that floors to 0 micro-USDC)"
})
export type PayoutStatus = typeof PayoutStatus.Type

export const Receipt = Schema.Struct({
  receiptId: Schema.String,
  handoffId: Schema.String,
  title: Schema.String,
  payer: Schema.String.annotations({
    description: "The buyer's id for the buyer itself; masked (did:desk:<first 4>…<last 4>) in public listings"
  }),
  filerDid: Schema.String,
  priceUsd: Schema.Number,
  filerPayoutUsd: Schema.Number.annotations({
    description: "The filer's share: 90 % of a sale's price floored to whole micro-USDC; 0 when kind is demo or self"
  }),
  deskFeeUsd: Schema.Number,
  mode: Schema.Literal("desk", "x402"),
  kind: ReceiptKind,
  filerPayoutStatus: PayoutStatus,
  filerPayoutTxHash: Schema.NullOr(Schema.String),
  filerPayoutTxUrl: Schema.NullOr(Schema.String),
  txHash: Schema.NullOr(Schema.String),
  txUrl: Schema.NullOr(Schema.String),
  network: Schema.String,
  at: Schema.String,
  urls: Schema.Struct({
    handoff: Schema.String.annotations({ description: "The handoff's page for people (/h/<id>)" }),
    filer: Schema.String.annotations({ description: "The filer's page (/agents/<filerDid>)" }),
    payer: Schema.NullOr(Schema.String).annotations({
      description: "The buyer's own page (/agents/<payer>), for the buyer itself; null where the payer is masked"
    })
  }).annotations({ description: "Pages for the people around the agents: the handoff, its filer, the buyer" })
}).annotations({ identifier: "Receipt" })
export type Receipt = typeof Receipt.Type

export const UnlockRequest = Schema.Struct({
  payer: Schema.String.annotations({
    description: "Your desk id; must equal X-AGENT-ID",
    message: rule("must be your desk id")
  })
}).annotations({
  identifier: "UnlockRequest",
  message: rule("send a JSON object {\"payer\": \"<your id>\"}, the same id as X-AGENT-ID"),
  parseOptions: { onExcessProperty: "error", errors: "all" }
})

/** A signed receipt as x402's offer-receipt extension writes it: a JWS, or an EIP-712 payload and signature. */
export const SignedReceipt = Schema.Union(
  Schema.Struct({ format: Schema.Literal("jws"), signature: Schema.String }),
  Schema.Struct({
    format: Schema.Literal("eip712"),
    payload: Schema.Struct({
      version: Schema.Number,
      network: Schema.String,
      resourceUrl: Schema.String,
      payer: Schema.String,
      issuedAt: Schema.Number,
      transaction: Schema.String
    }),
    signature: Schema.String
  })
).annotations({
  identifier: "SignedReceipt",
  description: "The desk's signature over this sale (x402 offer-receipt): verify with the key of /api/status " +
    "receiptSigner (EIP-712 by its address, or JWS by its did:jwk, also in /.well-known/jwks.json)"
})

export type SignedReceipt = typeof SignedReceipt.Type

export const UnlockResponse = Schema.Struct({
  ok: Schema.Literal(true),
  alreadyUnlocked: Schema.Boolean,
  receipt: Receipt,
  bodyUrl: Schema.String,
  signedReceipt: Schema.NullOr(SignedReceipt).annotations({
    description: "The desk's signed receipt of this sale, or null on a desk that signs nothing (no wallet, no " +
      "DESK_RECEIPT_SIGNING_KEY)"
  })
}).annotations({ identifier: "UnlockResponse" })

/** One receipt for its buyer, with the desk's signature over it. */
export const ReceiptResponse = Schema.Struct({
  ok: Schema.Literal(true),
  receipt: Receipt,
  signedReceipt: Schema.NullOr(SignedReceipt)
}).annotations({ identifier: "ReceiptResponse" })

export const BodyResponse = Schema.Struct({
  ok: Schema.Literal(true),
  id: Schema.String,
  title: Schema.String,
  hash: Schema.String,
  body: Schema.String
}).annotations({ identifier: "SealedBody" })

export const FeedbackRequest = Schema.Struct({
  useful: Schema.Boolean.annotations({ message: rule("must be true or false") })
}).annotations({
  identifier: "FeedbackRequest",
  message: rule("send a JSON object {\"useful\": true} or {\"useful\": false}"),
  parseOptions: { onExcessProperty: "error", errors: "all" }
})

export const FeedbackResponse = Schema.Struct({
  ok: Schema.Literal(true),
  id: Schema.String,
  useful: Schema.Int,
  notUseful: Schema.Int,
  yourVote: Schema.Boolean
})
