import { HttpApiSchema } from "@effect/platform"
import {
  InternalError,
  InvalidJson,
  MethodNotAllowed,
  PayloadTooLarge,
  RateLimited,
  UnsupportedMediaType
} from "../Domain/Errors.ts"
import { BESIDE_API, type BesideRoute } from "./BesideApi.ts"
import { type Json, schemaRef, type Spec } from "./OpenApiJson.ts"

/** The 405, and the serve-level errors every route may meet; asServed then keeps those its method and path can get. */
const ANSWERS = [MethodNotAllowed, InvalidJson, PayloadTooLarge, UnsupportedMediaType, RateLimited, InternalError]

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
