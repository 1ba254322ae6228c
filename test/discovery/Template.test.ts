import { Ajv2020 } from "ajv/dist/2020.js"
import { describe, expect, it } from "vitest"
import { LIMITS } from "../../src/Domain/Filing.ts"
import { filingSchema, template } from "../../src/Guide/Template.ts"
import { BODY, filing, newAgentId } from "../support/Fixtures.ts"

// Test-side walk over a loosely typed JSON document.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

const nodes = (value: Json): Array<Json> =>
  Array.isArray(value)
    ? value.flatMap(nodes)
    : value !== null && typeof value === "object"
    ? [value, ...Object.values(value).flatMap(nodes)]
    : []

const schema: Json = filingSchema

const validator = () => new Ajv2020({ strict: true, allErrors: true }).compile(filingSchema)

describe("the template's filing schema", () => {
  it("is JSON Schema 2020-12 that a strict 2020-12 validator compiles", () => {
    expect(filingSchema.$schema).toBe("https://json-schema.org/draft/2020-12/schema")
    expect(() => validator()).not.toThrow()
  })

  it("leaks no annotation names, puts nothing beside a $ref and resolves every $ref in $defs", () => {
    const all = nodes(filingSchema)
    expect(all.filter((node) => typeof node.title === "string")).toEqual([])
    expect(JSON.stringify(filingSchema)).not.toMatch(/between\(|maxItems\(|"int"|definitions/)
    for (const node of all.filter((_) => typeof _.$ref === "string")) {
      expect(Object.keys(node)).toEqual(["$ref"])
      expect(node.$ref).toMatch(/^#\/\$defs\//)
      expect(schema.$defs[node.$ref.slice("#/$defs/".length)]).toBeDefined()
    }
  })

  it("states the desk's real bounds", () => {
    const { properties } = filingSchema as Json
    expect(properties.priceUsd).toMatchObject({ type: "number", minimum: 0.000001, maximum: 1_000_000_000 })
    expect(properties.reconstructUsd).toMatchObject({ type: "number", minimum: 0.000002, maximum: 1_000_000_000 })
    expect(properties.title).toMatchObject({ minLength: 1, maxLength: LIMITS.title })
    expect(properties.body).toMatchObject({ minLength: LIMITS.bodyMin, maxLength: LIMITS.body })
    expect(properties.tags).toMatchObject({ maxItems: LIMITS.tags.items, items: { maxLength: LIMITS.tags.chars } })
    expect(properties.doesNotContain).toMatchObject({
      maxItems: LIMITS.doesNotContain.items,
      items: { maxLength: LIMITS.doesNotContain.chars }
    })
    const provenance = schema.$defs.ProvenanceInput as Json
    expect(provenance.properties.inputTokens.anyOf[0]).toEqual({
      type: "integer",
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER
    })
    expect(provenance.properties.tools).toMatchObject({ maxItems: LIMITS.tools.items })
  })

  it("accepts the template's own example and a fixture filing, and refuses what the desk refuses by shape", () => {
    const validate = validator()
    expect(validate(template.example), JSON.stringify(validate.errors)).toBe(true)
    expect(validate(filing(newAgentId())), JSON.stringify(validate.errors)).toBe(true)
    const refused: ReadonlyArray<Record<string, unknown>> = [
      { priceUsd: 0 },
      { priceUsd: 1e10 },
      { priceUsd: "1.20" },
      { body: BODY.slice(0, 100) },
      { tags: Array.from({ length: LIMITS.tags.items + 1 }, (_, i) => `t${i}`) },
      { filerDid: "did:desk:NOPE" },
      { hash: "0".repeat(64) },
      { provenance: { inputTokens: 1.5 } },
      // Whitespace only: the desk refuses it ("must not be empty, or only whitespace ..."), and so does the schema.
      { title: " \t\n " },
      { teaser: "   " },
      { tags: ["ok", "  "] },
      // No address by its shape (the checksum and the unusable addresses are the desk's own, named in $comment).
      { payoutAddress: "abc" },
      { payoutAddress: "" },
      // Never above a price of at least one micro-USDC.
      { reconstructUsd: 0.000001 }
    ]
    for (const change of refused) {
      expect(validate({ ...template.example, ...change }), JSON.stringify(change)).toBe(false)
    }
  })
})
