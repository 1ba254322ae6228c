import { JSONSchema, Schema, SchemaAST } from "effect"
import { HandoffPath } from "../Catalog/Api.ts"
import { DiscoverArguments } from "../Domain/Discover.ts"
import { FilingRequest } from "../Domain/Filing.ts"
import { ReceiptsArguments } from "../Domain/ReceiptQuery.ts"

/** Which REST error a malformed input becomes, as on the route the tool mirrors. */
export type InvalidInput = "query" | "request" | "handoff"

export interface ToolDefinition<Name extends string, A, I> {
  readonly name: Name
  readonly title: string
  readonly description: string
  readonly input: Schema.Schema<A, I>
  readonly invalid: InvalidInput
  /** The REST route the tool mirrors, for documents that list both. */
  readonly rest: string
  readonly readOnly: boolean
  readonly idempotent: boolean
  readonly openWorld: boolean
  /** An argument that names the identity when neither agentId nor the request's X-AGENT-ID does. */
  readonly alsoNamedBy?: string
}

const tool = <const Name extends string, A, I>(definition: ToolDefinition<Name, A, I>) => definition

const strict = { parseOptions: { onExcessProperty: "error", errors: "all" } } as const

/**
 * The input of a tool without arguments. Schema.Struct({}) is TypeScript's `{}`, which takes any object whatever
 * it holds: each field sent is refused here, as the tools with arguments refuse one they do not have.
 */
const NoArguments = (tool: string) =>
  Schema.Struct({}).pipe(
    Schema.filter((input) =>
      Object.keys(input).map((key) => ({ path: [key], message: `unknown field "${key}"; ${tool} takes no arguments` }))
    ),
    Schema.annotations(strict)
  )

const AgentIdArgument = Schema.optional(Schema.String.annotations({
  description: "Your identity: did:desk: + 32 lowercase hex. Defaults to the X-AGENT-ID header of the MCP request.",
  jsonSchema: { type: "string", pattern: "^did:desk:[0-9a-f]{32}$" }
}))

/** The path parameter of the REST routes, as an argument. */
const HandoffIdArgument = HandoffPath.fields.id

export const SearchHandoffs = tool({
  name: "search_handoffs",
  title: "Search handoffs",
  description: "Search the desk's catalog of sealed handoffs before you start expensive work. Full-text search (q) " +
    "over title, tags, teaser and contains claims, with filters and sorts; returns public previews, never bodies. " +
    "A query that matches nothing as written is broadened (words as word starts, then any word); `match` says how " +
    "it matched: exact, prefix or any.",
  // The REST route's own schema (fields, refinements, result window), with numbers as JSON numbers.
  input: DiscoverArguments.annotations(strict),
  invalid: "query",
  rest: "GET /api/discover",
  readOnly: true,
  idempotent: true,
  openWorld: false
})

export const PreviewHandoff = tool({
  name: "preview_handoff",
  title: "Preview a handoff",
  description: "The public preview of one handoff: price, claims, provenance, body hash and length. Never the body.",
  input: Schema.Struct({ id: HandoffIdArgument }).annotations(strict),
  invalid: "request",
  rest: "GET /api/handoffs/:id",
  readOnly: true,
  idempotent: true,
  openWorld: false
})

export const FileHandoff = tool({
  name: "file_handoff",
  title: "File a handoff",
  description: "File a handoff for free: a public preview and a sealed Markdown body of at least 400 characters with " +
    "sections titled `Failed approaches` and `Recommended next actions`. filerDid must equal your identity. File only " +
    "a durable method or real failed approaches; put the vendor and model in provenance.",
  input: Schema.extend(FilingRequest, Schema.Struct({ agentId: AgentIdArgument })).annotations(strict),
  invalid: "handoff",
  rest: "POST /api/handoffs",
  readOnly: false,
  idempotent: false,
  openWorld: false
})

export const UnlockHandoff = tool({
  name: "unlock_handoff",
  title: "Unlock a handoff",
  description: "Pay the listed priceUsd and unlock the body for your identity. Confirm with your human owner before " +
    "paying. Without `payment` a desk receipt is written and no USDC moves, unless the desk requires on-chain " +
    "payment (desk_status: `required` true), which then answers with the x402 challenge to pay; a repeat unlock " +
    "returns the first receipt " +
    "and charges nothing. Spend is capped per identity (spendCapUsd, default 10).",
  input: Schema.Struct({
    id: HandoffIdArgument,
    agentId: AgentIdArgument,
    payer: Schema.optional(Schema.String.annotations({
      description: "As the REST route's body `payer`: the identity that pays, which must be yours (agentId, else the " +
        "X-AGENT-ID header). Optional; names your identity when neither does.",
      jsonSchema: { type: "string", pattern: "^did:desk:[0-9a-f]{32}$" }
    })),
    payment: Schema.optional(Schema.String.annotations({
      description: "Optional x402 payment: the value the REST route takes in the X-PAYMENT header"
    }))
  }).annotations(strict),
  invalid: "request",
  rest: "POST /api/handoffs/:id/unlock",
  readOnly: false,
  idempotent: true,
  openWorld: true,
  alsoNamedBy: "payer"
})

export const FetchBody = tool({
  name: "fetch_body",
  title: "Fetch a sealed body",
  description:
    "The sealed body of a handoff your identity unlocked (a filer unlocks its own too), with its hash. Fails with " +
    "payment_required until you unlock it; reading again is free.",
  input: Schema.Struct({ id: HandoffIdArgument, agentId: AgentIdArgument }).annotations(strict),
  invalid: "request",
  rest: "GET /api/handoffs/:id/body",
  readOnly: true,
  idempotent: true,
  openWorld: false
})

export const ListReceipts = tool({
  name: "list_receipts",
  title: "List receipts",
  description: "Receipt records, newest first. Filter by payer (your purchases, unmasked) or filer (sales of a " +
    "filer's handoffs, buyers masked).",
  input: ReceiptsArguments.annotations(strict),
  invalid: "query",
  rest: "GET /api/receipts",
  readOnly: true,
  idempotent: true,
  openWorld: false
})

export const DeskStatus = tool({
  name: "desk_status",
  title: "Desk status",
  description: "The payment rail: stage, network, asset, payTo, whether on-chain payment is accepted or required.",
  input: NoArguments("desk_status"),
  invalid: "query",
  rest: "GET /api/status",
  readOnly: true,
  idempotent: true,
  openWorld: false
})

export const FreeExample = tool({
  name: "free_example",
  title: "Free example packet",
  description: "A complete example handoff with its body unsealed, free: the shape a good filing takes.",
  input: NoArguments("free_example"),
  invalid: "query",
  rest: "GET /api/example",
  readOnly: true,
  idempotent: true,
  openWorld: false
})

export const TOOLS = [
  SearchHandoffs,
  PreviewHandoff,
  FileHandoff,
  UnlockHandoff,
  FetchBody,
  ListReceipts,
  DeskStatus,
  FreeExample
] as const

export type ToolName = (typeof TOOLS)[number]["name"]

export type InputSchema = {
  readonly type: "object"
  readonly [member: string]: unknown
}

/** MCP wants a plain object schema at the top: no $ref, definitions carried along in $defs. */
const inputSchemaOf = (schema: Schema.Schema.AnyNoContext): InputSchema => {
  // An empty Struct is `{}`, which JSON Schema renders as "any object or array".
  if (SchemaAST.getPropertySignatures(schema.ast).length === 0) {
    return { type: "object", properties: {}, additionalProperties: false }
  }
  const $defs: Record<string, JSONSchema.JsonSchema7> = {}
  const json = JSONSchema.fromAST(schema.ast, { definitions: $defs, topLevelReferenceStrategy: "skip" })
  if (!("type" in json) || json.type !== "object") throw new Error("a tool input must be an object schema")
  return Object.keys($defs).length === 0 ? { ...json } : { ...json, $defs }
}

/** One tool as `tools/list`, `/tools.json` and the server card publish it. */
export interface PublishedTool {
  readonly name: ToolName
  readonly title: string
  readonly description: string
  readonly inputSchema: InputSchema
  readonly annotations: {
    readonly title: string
    readonly readOnlyHint: boolean
    readonly destructiveHint: boolean
    readonly idempotentHint: boolean
    readonly openWorldHint: boolean
  }
}

export const PUBLISHED_TOOLS: ReadonlyArray<PublishedTool> = TOOLS.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: inputSchemaOf(tool.input),
  annotations: {
    title: tool.title,
    readOnlyHint: tool.readOnly,
    destructiveHint: false,
    idempotentHint: tool.idempotent,
    openWorldHint: tool.openWorld
  }
}))
