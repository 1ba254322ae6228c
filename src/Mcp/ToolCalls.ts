import { Cause, Context, Data, Effect, Layer, Option, ParseResult, Schema } from "effect"
import { Catalog } from "../Catalog.ts"
import { discoverAnswer } from "../Catalog/DiscoverAnswer.ts"
import { DeskConfig } from "../Config.ts"
import { internalFailure } from "../Desk/InternalFailure.ts"
import { unavailableFor } from "../Desk/Outage.ts"
import { deskStatus } from "../Desk/Status.ts"
import { type PayoutRail, withPayoutIssues } from "../Domain/Agent.ts"
import { toCatalogQuery } from "../Domain/Discover.ts"
import {
  AgentIdRequired,
  DuplicateBody,
  InternalError,
  InvalidAgentId,
  InvalidHandoff,
  InvalidQuery,
  InvalidRequest,
  NotFound,
  NotUnlocked,
  PaymentInvalid,
  PaymentRequired,
  PayoutChangeRefused,
  SettlementPending,
  SettlementUnavailable,
  SignInRefused,
  SpendCapExceeded,
  Unavailable
} from "../Domain/Errors.ts"
import { withIdentityIssues } from "../Domain/FilingRules.ts"
import { DeskId } from "../Domain/Ids.ts"
import { issuesOf, summarize } from "../Domain/Issues.ts"
import { LONG_LIST, shapeProblem } from "../Domain/JsonShape.ts"
import { toReceiptQuery } from "../Domain/ReceiptQuery.ts"
import { EXAMPLE_PACKET } from "../Guide/Example.ts"
import { requireAgentId } from "../Identity/AgentId.ts"
import { Ledger } from "../Ledger.ts"
import { challengeOf, settlementAnswerOf } from "../Ledger/X402Answers.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { ReceiptSigning } from "../ReceiptSigning.ts"
import { RailProfile, Settlement } from "../Settlement.ts"
import {
  DeskStatus,
  FetchBody,
  FileHandoff,
  FreeExample,
  ListReceipts,
  PreviewHandoff,
  SearchHandoffs,
  type ToolDefinition,
  type ToolName,
  UnlockHandoff
} from "./Tools.ts"
import { toMcpWords } from "./Words.ts"

/** Every failure a tool can report, encoded to the same wire envelope as on REST. */
const ToolFailure = Schema.Union(
  NotFound,
  AgentIdRequired,
  InvalidAgentId,
  InvalidHandoff,
  InvalidQuery,
  InvalidRequest,
  SpendCapExceeded,
  NotUnlocked,
  PayoutChangeRefused,
  PaymentRequired,
  PaymentInvalid,
  SettlementPending,
  SettlementUnavailable,
  Unavailable,
  DuplicateBody,
  SignInRefused
)
type ToolFailure = typeof ToolFailure.Type

/**
 * A CallToolResult (a type alias, so it meets the SDK's index signature): the value as JSON text, once. The tools
 * declare no outputSchema, so `structuredContent` is optional, and carrying it too doubled every result.
 */
export type ToolResult = {
  readonly content: Array<{ readonly type: "text"; readonly text: string }>
  readonly isError: boolean
}

const resultOf = (value: object, isError: boolean): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  isError
})

const isDeskId = Schema.is(DeskId)

const invalidInput = (
  tool: Pick<ToolDefinition<string, never, never>, "name" | "invalid">,
  error: ParseResult.ParseError,
  args: unknown,
  agentHeader: string | undefined,
  rail: PayoutRail
) => {
  const decoded = issuesOf(
    ParseResult.ArrayFormatter.formatErrorSync(error),
    `see the input schema of ${tool.name} in tools/list`
  )
  // A filing also hears about its payout address and filerDid against the identity filing it, once that is an id,
  // as over REST.
  const agent = namedAgent(args, agentHeader)
  const filing = tool.invalid === "handoff" ? withPayoutIssues(decoded, args, rail) : decoded
  const all = tool.invalid === "handoff" && typeof agent === "string" && isDeskId(agent)
    ? withIdentityIssues(filing, args, agent)
    : filing
  // The first 20, as over REST: a request of a few kilobytes can hold thousands of wrong items.
  const { issues, text } = summarize(all)
  return toolInvalid(tool, `Invalid arguments for ${tool.name}: ${text}`, issues)
}

const toolInvalid = (
  tool: Pick<ToolDefinition<string, never, never>, "invalid">,
  message: string,
  issues: ReadonlyArray<{ readonly path: string; readonly message: string }>
) => {
  switch (tool.invalid) {
    case "query":
      return new InvalidQuery({ message, issues })
    case "handoff":
      return new InvalidHandoff({ message, issues })
    case "request":
      return new InvalidRequest({ message, issues })
  }
}

/**
 * A failure worded here, for MCP, from the start: it names the agentId argument and the X-AGENT-ID header of the
 * MCP request itself, and toMcpWords, which rewords the services' REST words, would reword it a second time.
 */
class InMcpWords extends Data.TaggedClass("InMcpWords")<{ readonly failure: ToolFailure }> {}

type Runner = (
  args: unknown,
  agentHeader: string | undefined,
  rail: PayoutRail
) => Effect.Effect<object, ToolFailure | InMcpWords>

/**
 * A tool's arguments without those holding "": for the tools whose REST route reads query parameters, where an empty
 * parameter is one not sent (src/Http/EmptyParams.ts), as the discover echo's unset `""` values are sent back.
 */
const emptyLeftOut = (args: unknown) =>
  typeof args === "object" && args !== null && !Array.isArray(args)
    ? Object.fromEntries(Object.entries(args).filter(([, value]) => value !== ""))
    : args

const runner = <A, I>(
  tool: ToolDefinition<string, A, I>,
  handle: (input: A, agentHeader: string | undefined) => Effect.Effect<object, ToolFailure | InMcpWords>,
  { readsQuery = false }: { readonly readsQuery?: boolean } = {}
): Runner =>
(given, agentHeader, rail) => {
  const args = readsQuery ? emptyLeftOut(given) : given
  // A list over the body guard's limit, refused before its items are decoded, as REST refuses it (its route's 422).
  const long = shapeProblem(args)
  if (long?.path !== undefined) {
    const problem = `${long.path} ${LONG_LIST}`
    return Effect.fail(toolInvalid(tool, `Invalid arguments for ${tool.name}: ${problem}.`, [
      { path: long.path, message: LONG_LIST }
    ]))
  }
  return Schema.decodeUnknown(tool.input)(args ?? {}).pipe(
    Effect.mapError((error) => invalidInput(tool, error, args, agentHeader, rail)),
    Effect.flatMap((input) => handle(input, agentHeader))
  )
}

const identify = (agentId: string | undefined, agentHeader: string | undefined) =>
  requireAgentId(agentId ?? agentHeader).pipe(
    Effect.mapError((error) =>
      new InMcpWords({
        failure: error._tag === "AgentIdRequired"
          ? new AgentIdRequired({
            message: "Pass your identity as agentId (did:desk: + 32 lowercase hex) or send the X-AGENT-ID header " +
              "with the MCP request."
          })
          : new InvalidAgentId({
            message: "agentId (or X-AGENT-ID) must be did:desk: followed by 32 lowercase hex characters."
          })
      })
    )
  )

const argument = (args: unknown, name: string | undefined): unknown =>
  typeof args === "object" && args !== null && name !== undefined && name in args
    ? (args as Record<string, unknown>)[name]
    : undefined

/**
 * The identity a call names: its agentId argument, else the MCP request's X-AGENT-ID, else the tool's `alsoNamedBy`
 * argument (unlock_handoff's `payer`, as REST names it), a blank one naming none, as a blank header names none on
 * REST. Judged before the other arguments, as REST judges X-AGENT-ID before the body; an argument that is not text
 * is left to the input's decoding, which names it.
 */
const namedAgent = (
  args: unknown,
  agentHeader: string | undefined,
  alsoNamedBy?: string
): string | undefined | "not text" => {
  const named = [argument(args, "agentId"), agentHeader, argument(args, alsoNamedBy)]
  if (named.some((_) => _ !== undefined && typeof _ !== "string")) return "not text"
  return (named as ReadonlyArray<string | undefined>).find((_) => _ !== undefined && _.trim() !== "")
}

/** A tool run as the identity `judge` makes of the one the call names, judged before the tool's input. */
const judgedBy = <Who>(judge: (named: string | undefined) => Effect.Effect<Who, InMcpWords>) =>
<A, I>(
  tool: ToolDefinition<string, A, I>,
  handle: (input: A, who: Who) => Effect.Effect<object, ToolFailure | InMcpWords>
): Runner =>
(args, agentHeader, rail) => {
  const named = namedAgent(args, agentHeader, tool.alsoNamedBy)
  // The input's decoding refuses it: agentId (and `alsoNamedBy`) is text in every input schema.
  if (named === "not text") {
    return runner(tool, () => Effect.dieMessage("agentId is not text"))(args, agentHeader, rail)
  }
  return Effect.flatMap(judge(named), (who) => runner(tool, (input) => handle(input, who))(args, agentHeader, rail))
}

/** A tool that acts as an identity: refused without one or with a malformed one. */
const asAgent = judgedBy((named) => identify(named, undefined))

/** A tool that reads as an identity if one is named. */
const asAgentIfNamed = judgedBy((named) =>
  named === undefined ? Effect.succeedNone : Effect.asSome(identify(named, undefined))
)

const NEXT_ACTIONS = {
  preview: "preview_handoff {id} (free, no body)",
  buy: "unlock_handoff {id} (confirm with your owner first)",
  fetch: "fetch_body {id} after unlocking",
  file: "file_handoff (free; see free_example for the shape)"
}

const make = Effect.gen(function*() {
  const catalog = yield* Catalog
  const ledger = yield* Ledger
  const settlement = yield* Settlement
  const rail = yield* RailProfile
  const signing = yield* ReceiptSigning
  const config = yield* DeskConfig
  const { policy } = yield* RateLimiter

  const runners: Record<ToolName, Runner> = {
    search_handoffs: runner(
      SearchHandoffs,
      (input) => {
        // REST's answer, member for member (`next` its path of the following page), with this door's next steps.
        const query = toCatalogQuery(input)
        return Effect.map(
          catalog.discover(query),
          (listing) => discoverAnswer(config.publicUrl, input, query, listing, NEXT_ACTIONS)
        )
      },
      { readsQuery: true }
    ),
    preview_handoff: runner(PreviewHandoff, (input) => catalog.get(input.id)),
    file_handoff: asAgent(FileHandoff, ({ agentId: _, ...filing }, agent) => catalog.file(agent, filing)),
    unlock_handoff: asAgent(UnlockHandoff, (input, agent) =>
      // As over REST, a payer that is not the identity acting is refused (422 naming `payer`).
      Effect.flatMap(
        ledger.unlock(agent, input.id, input.payer ?? agent, Option.fromNullable(input.payment)),
        ({ response, settled }) =>
          // What REST sends in PAYMENT-RESPONSE / X-PAYMENT-RESPONSE, as the result's `paymentResponse`.
          Effect.map(
            settlementAnswerOf(settlement, signing, settled, `${config.publicUrl}/api/handoffs/${input.id}/unlock`),
            Option.match({
              onNone: () => response,
              onSome: ({ answer }) => ({ ...response, paymentResponse: answer })
            })
          )
      )),
    fetch_body: asAgentIfNamed(FetchBody, (input, agent) => ledger.body(input.id, agent)),
    list_receipts: runner(ListReceipts, (input) => ledger.listReceipts(toReceiptQuery(input)), { readsQuery: true }),
    desk_status: runner(DeskStatus, () => deskStatus(config, rail, settlement, signing, policy)),
    free_example: runner(FreeExample, () => Effect.succeed(EXAMPLE_PACKET))
  }

  const internalError = (cause: Cause.Cause<unknown>) =>
    Effect.gen(function*() {
      const trouble = unavailableFor(cause)
      if (Option.isSome(trouble)) {
        yield* Effect.logWarning("database unavailable", String(trouble.value.reason))
        return resultOf(Schema.encodeSync(ToolFailure)(trouble.value.error), true)
      }
      return resultOf(Schema.encodeSync(InternalError)(yield* internalFailure("MCP tool failed", cause)), true)
    })

  const isTool = (name: string): name is ToolName => Object.hasOwn(runners, name)

  /** None for a name that is not a tool; otherwise the result, with failures as `isError` results. */
  const call = (
    name: string,
    args: unknown,
    agentHeader: string | undefined
  ): Option.Option<Effect.Effect<ToolResult>> =>
    isTool(name)
      ? Option.some(
        runners[name](args, agentHeader, rail).pipe(
          Effect.matchEffect({
            onSuccess: (value) => Effect.succeed(resultOf(value, false)),
            onFailure: (error) => {
              if (error instanceof InMcpWords) {
                return Effect.succeed(resultOf(Schema.encodeSync(ToolFailure)(error.failure), true))
              }
              const envelope = toMcpWords(Schema.encodeSync(ToolFailure)(error))
              // What REST sends in PAYMENT-REQUIRED: the v2 challenge with its signed offers, as `paymentRequired`.
              return Effect.map(challengeOf(settlement, signing, error), (challenge) =>
                resultOf(
                  Option.match(challenge, {
                    onNone: () => envelope,
                    onSome: (paymentRequired) => ({ ...envelope, paymentRequired })
                  }),
                  true
                ))
            }
          }),
          Effect.catchAllDefect((defect) => internalError(Cause.die(defect))),
          Effect.withSpan("ToolCalls.call", { attributes: { tool: name } })
        )
      )
      : Option.none()

  return { call } as const
})

export class ToolCalls extends Context.Tag("ToolCalls")<ToolCalls, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(ToolCalls, make)
}
