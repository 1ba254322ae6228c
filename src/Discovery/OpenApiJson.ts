// The generator's output is loosely typed JSON; these aliases only name what is walked.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any
export type Spec = Record<string, Json>

export const SCHEMAS = "#/components/schemas/"

export const refName = (schema: Json): string | undefined =>
  typeof schema?.$ref === "string" && schema.$ref.startsWith(SCHEMAS) ? schema.$ref.slice(SCHEMAS.length) : undefined

export const membersOf = (schema: Json): Array<Json> => (Array.isArray(schema?.anyOf) ? schema.anyOf : [schema])
