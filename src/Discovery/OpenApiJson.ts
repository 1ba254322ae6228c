import { OpenApiJsonSchema } from "@effect/platform"
import { Schema, type SchemaAST } from "effect"

// The generator's output is loosely typed JSON; these aliases only name what is walked.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any
export type Spec = Record<string, Json>

export const SCHEMAS = "#/components/schemas/"

export const refName = (schema: Json): string | undefined =>
  typeof schema?.$ref === "string" && schema.$ref.startsWith(SCHEMAS) ? schema.$ref.slice(SCHEMAS.length) : undefined

export const membersOf = (schema: Json): Array<Json> => (Array.isArray(schema?.anyOf) ? schema.anyOf : [schema])

/** The JSON Schema of `schema` as the generator writes it: a `$ref` to its component, added if missing. */
export const schemaRef = (spec: Spec, schema: { readonly ast: SchemaAST.AST }): Json =>
  OpenApiJsonSchema.makeWithDefs(Schema.make(schema.ast), { defs: spec.components.schemas })
