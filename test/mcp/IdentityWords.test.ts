import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { connectMcp } from "../support/McpClient.ts"
import { backends } from "../support/Storage.ts"

interface Envelope {
  readonly error: string
  readonly message: string
  readonly issues?: ReadonlyArray<{ readonly path: string; readonly message: string }>
}

/** A failure through the official client: the error envelope, with every text in it put into MCP words once. */
const failure = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(async () => {
    const result = await client.callTool({ name, arguments: args })
    expect(result.isError).toBe(true)
    const envelope = JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as Envelope
    for (const text of [envelope.message, ...(envelope.issues ?? []).map((_) => _.message)]) {
      // Reworded twice, "the X-AGENT-ID header" became "your agentId (or ...) ... with the MCP request".
      for (const word of [/agentId/g, /X-AGENT-ID/g, /MCP request/g]) {
        expect(text.match(word)?.length ?? 0, `${word} in ${text}`).toBeLessThanOrEqual(1)
      }
      expect(text).not.toMatch(/POST \/api\/handoffs\/.*unlock/)
    }
    return envelope
  })

/** A client of the desk's MCP endpoint and the id of a handoff it filed through file_handoff. */
const filedThroughMcp = Effect.gen(function*() {
  const filer = newAgentId()
  const client = yield* connectMcp()
  const filed = yield* Effect.promise(() =>
    client.callTool({ name: "file_handoff", arguments: { ...filing(filer), agentId: filer } })
  )
  const id: string = JSON.parse((filed.content as Array<{ text: string }>)[0]!.text).id
  return { client, filer, id }
})

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`MCP identity words over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.scoped("every failure that names X-AGENT-ID on REST is put into MCP words once", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const { client, filer, id } = yield* filedThroughMcp

          // agent_id_required: worded for MCP by the tool call itself, so not reworded.
          const required =
            "Pass your identity as agentId (did:desk: + 32 lowercase hex) or send the X-AGENT-ID header with the MCP " +
            "request."
          for (const [tool, args] of [["unlock_handoff", { id }], ["file_handoff", filing(newAgentId())]] as const) {
            expect(yield* failure(client, tool, args), tool).toEqual({
              ok: false,
              error: "agent_id_required",
              message: required
            })
          }

          // invalid_agent_id, from the argument and from the header.
          const malformed = "agentId (or X-AGENT-ID) must be did:desk: followed by 32 lowercase hex characters."
          expect(yield* failure(client, "unlock_handoff", { id, agentId: "did:desk:nope" })).toMatchObject({
            error: "invalid_agent_id",
            message: malformed
          })
          const badHeader = yield* connectMcp({ "X-AGENT-ID": "did:desk:nope" })
          expect(yield* failure(badHeader, "fetch_body", { id })).toMatchObject({
            error: "invalid_agent_id",
            message: malformed
          })

          // invalid_handoff: the REST issue "must equal the X-AGENT-ID header", reworded once.
          expect(yield* failure(client, "file_handoff", { ...filing(filer), agentId: newAgentId() })).toMatchObject({
            error: "invalid_handoff",
            issues: [{
              path: "filerDid",
              message: "must equal your agentId (or the X-AGENT-ID header of the MCP request)"
            }]
          })

          // Beside the schema's own problems in one answer, as over REST.
          const several = yield* failure(client, "file_handoff", {
            ...filing(filer),
            priceUsd: 0.1234567,
            agentId: newAgentId()
          })
          expect(several.error).toBe("invalid_handoff")
          expect(several.issues).toEqual([
            { path: "filerDid", message: "must equal your agentId (or the X-AGENT-ID header of the MCP request)" },
            expect.objectContaining({ path: "priceUsd" })
          ])

          // payment_required: the REST way to unlock (with X-AGENT-ID) becomes the tool call.
          const sealed = yield* failure(client, "fetch_body", { id, agentId: newAgentId() })
          expect(sealed.error).toBe("payment_required")
          expect(sealed.message).toContain(`unlock_handoff {"id": "${id}"}`)
          expect(sealed.message).not.toContain("X-AGENT-ID")

          // siwx_refused: no tool signs in, so the REST route is named as such.
          const signer = newAgentId()
          const set = yield* Effect.promise(() =>
            fetch(`${desk.url}/api/agents`, {
              method: "POST",
              headers: { "content-type": "application/json", accept: "application/json", "x-agent-id": signer },
              body: JSON.stringify({ id: signer, spendCapUsd: 10 })
            }).then(readJson)
          )
          expect(set).toMatchObject({ id: signer, requireSignIn: false })
          // This desk has no chain, so it refuses requireSignIn (no wallet could sign in); the flag is written as a
          // desk with one records it, for the words of the refusal.
          yield* Effect.orDie(
            (yield* SqlClient.SqlClient)`UPDATE agents SET require_sign_in = true WHERE id = ${signer}`
          )
          const refused = yield* failure(client, "fetch_body", { id, agentId: signer })
          expect(refused).toMatchObject({ error: "siwx_refused", reason: "siwx_required" })
          expect(refused.message).toContain(
            "request GET /api/handoffs/:id/body (REST; no MCP tool signs in) without X-AGENT-ID"
          )
        }))

      it.scoped("unlock_handoff takes REST's payer: it names the identity, or must equal the one named", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const { client, id } = yield* filedThroughMcp
          const receiptsOf = (payer: string) =>
            Effect.promise(() => fetch(`${desk.url}/api/receipts?payer=${payer}`).then(readJson))

          // A payer other than agentId, or than the request's X-AGENT-ID: refused, nothing written.
          const buyer = newAgentId()
          const other = newAgentId()
          const mismatch = {
            error: "invalid_request",
            issues: [{
              path: "payer",
              message: "must equal your agentId (or the X-AGENT-ID header of the MCP request)"
            }]
          }
          expect(yield* failure(client, "unlock_handoff", { id, agentId: buyer, payer: other })).toMatchObject(mismatch)
          const asBuyer = yield* connectMcp({ "X-AGENT-ID": buyer })
          expect(yield* failure(asBuyer, "unlock_handoff", { id, payer: other })).toMatchObject(mismatch)
          expect(yield* failure(client, "unlock_handoff", { id, payer: 7 })).toMatchObject({
            error: "invalid_request",
            issues: [expect.objectContaining({ path: "payer" })]
          })
          for (const who of [buyer, other]) expect(yield* receiptsOf(who)).toMatchObject({ total: 0 })

          // The payer alone names the identity, as REST's body and header name the same one.
          const unlocked = yield* Effect.promise(() =>
            client.callTool({ name: "unlock_handoff", arguments: { id, payer: buyer } })
          )
          expect(unlocked.isError).toBeFalsy()
          expect(JSON.parse((unlocked.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ ok: true })
          expect(yield* receiptsOf(buyer)).toMatchObject({ total: 1 })
          expect(yield* receiptsOf(other)).toMatchObject({ total: 0 })
        }))
    })
  })
}
