import { Option, Schema } from "effect"
import { rule } from "./Issues.ts"

export const DESK_ID_PATTERN = /^did:desk:[0-9a-f]{32}$/

export const DeskId = Schema.String.annotations({ message: rule("must be a string") }).pipe(
  Schema.pattern(DESK_ID_PATTERN, {
    message: rule("must be did:desk: followed by 32 lowercase hexadecimal characters")
  }),
  Schema.brand("DeskId")
).annotations({ identifier: "DeskId", description: "Agent identity: did:desk: + 32 lowercase hex characters" })
export type DeskId = typeof DeskId.Type

const HANDOFF_ID_PATTERN = /^DESK-([1-9][0-9]{0,14})$/

export const HandoffId = Schema.String.pipe(
  Schema.pattern(HANDOFF_ID_PATTERN),
  Schema.brand("HandoffId")
).annotations({ identifier: "HandoffId", description: "Handoff id: DESK- followed by a decimal number" })
export type HandoffId = typeof HandoffId.Type

export const handoffIdOf = (seq: number): HandoffId => HandoffId.make(`DESK-${seq}`)

/** The database sequence number behind a handoff id, if the text is a well-formed id. */
export const handoffSeq = (id: string): Option.Option<number> => {
  const match = HANDOFF_ID_PATTERN.exec(id)
  return match ? Option.some(Number(match[1])) : Option.none()
}
