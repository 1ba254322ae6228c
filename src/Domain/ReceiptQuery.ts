import { Schema } from "effect"
import { DeskId } from "./Ids.ts"
import { asNumber, fromText, type NumberInput, pagingFields, pagingOf, withinResultWindow } from "./Paging.ts"

const receiptFields = <I>(number: NumberInput<I>) => ({
  payer: Schema.optional(DeskId.annotations({ description: "Only receipts bought by this desk id (shown unmasked)" })),
  filer: Schema.optional(DeskId.annotations({ description: "Only receipts of this filer's handoffs (payers masked)" })),
  ...pagingFields(number)
})

/** The filters a receipt listing deeper than the result window is told to use instead. */
const NARROWED_BY = ["payer", "filer"]

/**
 * A receipt listing's total is counted exactly up to this many receipts; past it, it is PostgreSQL's estimate
 * (never below what was counted). Counting every receipt of a desk with a million sales took 117 ms a request.
 */
export const RECEIPTS_COUNTED_UP_TO = 1_000

/** Query parameters of GET /api/receipts. */
export const ReceiptsParams = withinResultWindow(
  Schema.Struct(receiptFields(fromText)).annotations({ parseOptions: { errors: "all" } }),
  NARROWED_BY
)
export type ReceiptsParams = typeof ReceiptsParams.Type

/** The same query as MCP arguments (list_receipts). */
export const ReceiptsArguments = withinResultWindow(Schema.Struct(receiptFields(asNumber)), NARROWED_BY)

/** The filter a receipt listing reads, with its page. */
export const toReceiptQuery = (params: ReceiptsParams) => ({
  payer: params.payer ?? null,
  filer: params.filer ?? null,
  ...pagingOf(params)
})
export type ReceiptQuery = ReturnType<typeof toReceiptQuery>
