import { HttpApiSchema, OpenApiJsonSchema } from "@effect/platform"
import { Schema, type SchemaAST } from "effect"
import {
  InternalError,
  InvalidJson,
  MethodNotAllowed,
  PayloadTooLarge,
  RateLimited,
  UnsupportedMediaType
} from "../Domain/Errors.ts"
import { BESIDE_API, type BesideRoute } from "./BesideApi.ts"
import { type Json, membersOf, SCHEMAS, type Spec } from "./OpenApiJson.ts"

const TAG_OF = { mcp: "MCP", discovery: "Discovery" } as const

/** The serve-level errors every route may meet; asServed then keeps those its method and path can get. */
const COMMON_ERRORS = [InvalidJson, PayloadTooLarge, UnsupportedMediaType, RateLimited, InternalError]

const JSON_RPC_ERROR = {
  type: "object",
  required: ["jsonrpc", "error"],
  properties: {
    jsonrpc: { type: "string", enum: ["2.0"] },
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "integer" }, message: { type: "string" } }
    },
    id: {}
  },
  description: "A JSON-RPC 2.0 error response"
}

const besideOperation = (spec: Spec, route: BesideRoute): Json => {
  const ref = (schema: { readonly ast: SchemaAST.AST }) =>
    OpenApiJsonSchema.makeWithDefs(Schema.make(schema.ast), { defs: spec.components.schemas })
  spec.components.schemas.JsonRpcError = JSON_RPC_ERROR
  const responses: Record<string, Json> = {}
  const add = (status: string, description: string, schema?: Json) => {
    const existing = responses[status]?.content?.["application/json"]
    if (existing !== undefined && schema !== undefined) {
      existing.schema = { anyOf: [...membersOf(existing.schema), schema] }
    } else {responses[status] = {
        description,
        ...(schema === undefined ? {} : { content: { "application/json": { schema } } })
      }}
  }
  for (const answer of route.answers) {
    const status = String(answer.status)
    switch (answer.body) {
      case "object":
        add(status, answer.description, { type: "object" })
        break
      case "empty":
        add(status, answer.description)
        break
      case "jsonRpcError":
        add(status, answer.description, { $ref: `${SCHEMAS}JsonRpcError` })
        break
      case "methodNotAllowed":
        add(status, answer.description, ref(MethodNotAllowed))
    }
  }
  for (const error of COMMON_ERRORS) add(String(HttpApiSchema.getStatusErrorAST(error.ast)), "", ref(error))
  return {
    tags: [TAG_OF[route.group]],
    operationId: `${route.group}.${route.method.toLowerCase()}${
      route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c = "") => c.toUpperCase())
    }`,
    summary: route.summary,
    parameters: route.group === "mcp" && route.method === "POST"
      ? [{
        name: "x-agent-id",
        in: "header",
        required: false,
        schema: { type: "string" },
        description: "Your identity, used when a tool call has no agentId argument."
      }]
      : [],
    ...(route.method === "POST"
      ? {
        requestBody: {
          required: true,
          content: { "application/json": { schema: { type: "object", description: "A JSON-RPC 2.0 message" } } }
        }
      }
      : {}),
    security: [],
    responses
  }
}

/** Routes on the same router but outside the HttpApi (the MCP endpoint and its documents). */
export const addBesideRoutes = (spec: Spec) => {
  for (const route of BESIDE_API) {
    spec.paths[route.path] ??= {}
    spec.paths[route.path][route.method.toLowerCase()] = besideOperation(spec, route)
    const tag = TAG_OF[route.group]
    if (!spec.tags.some((_: Json) => _.name === tag)) spec.tags.push({ name: tag })
  }
}
