import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { requireAgentId } from "../../src/Identity/AgentId.ts"

const id = `did:desk:${"ab".repeat(16)}`
const other = `did:desk:${"cd".repeat(16)}`
const refusalOf = (value: string | undefined) => Effect.runSync(Effect.either(requireAgentId(value)))

describe("X-AGENT-ID", () => {
  it("one well-formed id is the identity; none is 401's, a malformed one 400's", () => {
    expect(refusalOf(id)).toEqual(Either.right(id))
    expect(Either.getLeft(refusalOf(undefined)).pipe((_) => _._tag === "Some" && _.value._tag)).toBe("AgentIdRequired")
    const malformed = Either.getLeft(refusalOf(`${id}'--`))
    expect(malformed._tag === "Some" && malformed.value.message).toMatch(/did:desk: followed by 32 lowercase/)
  })

  // Node joins a header sent twice with ", ": an outside check sent one id twice and was told its id was malformed.
  it("the header sent twice (as Node joins it) is refused as sent twice, whether the ids agree or not", () => {
    for (const joined of [`${id}, ${id}`, `${id}, ${other}`, `${id},${id}`]) {
      const refused = Either.getLeft(refusalOf(joined))
      expect(refused._tag === "Some" && refused.value._tag, joined).toBe("InvalidAgentId")
      expect(refused._tag === "Some" && refused.value.message, joined).toContain("sent more than once")
    }
    const garbled = Either.getLeft(refusalOf(`${id}, nonsense`))
    expect(garbled._tag === "Some" && garbled.value.message).toMatch(/did:desk: followed by 32 lowercase/)
  })
})
