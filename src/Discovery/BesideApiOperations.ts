import { HttpApiSchema } from "@effect/platform"
import {
  BadRequest,
  ExpectationFailed,
  HeadersTooLarge,
  InternalError,
  MethodNotAllowed,
  PayloadTooLarge,
  RateLimited,
  RequestTimeout
} from "../Domain/Errors.ts"
import { BESIDE_API, type BesideRoute } from "./BesideApi.ts"
import { type Json, schemaRef, type Spec } from "./OpenApiJson.ts"

/**
 * The 405, and the serve-level errors every request may meet: Node's own refusals (400, 408, 417, 431) and a body
 * over the limit (413); asServed then keeps those its method and path can get. No body of these is read, so its
 * JSON and its type are never judged (no 400 `invalid_json`, no 415): the 405 answers first.
 */
const ANSWERS = [
  MethodNotAllowed,
  PayloadTooLarge,
  RateLimited,
  InternalError,
  BadRequest,
  RequestTimeout,
  ExpectationFailed,
  HeadersTooLarge
]

const besideOperation = (spec: Spec, route: BesideRoute): Json => {
  const responses = Object.fromEntries(ANSWERS.map((answer) => [
    String(HttpApiSchema.getStatusErrorAST(answer.ast)),
    { description: "", content: { "application/json": { schema: schemaRef(spec, answer) } } }
  ]))
  return {
    tags: ["MCP"],
    operationId: `mcp.${route.method.toLowerCase()}Mcp`,
    summary: route.summary,
    parameters: [],
    security: [],
    responses
  }
}

/** The routes beside the HttpApi, written into its document (see BesideApi.ts for why they are beside it). */
export const addBesideRoutes = (spec: Spec) => {
  for (const route of BESIDE_API) {
    spec.paths[route.path] ??= {}
    spec.paths[route.path][route.method.toLowerCase()] = besideOperation(spec, route)
  }
}
