import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createWalletClient, http } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { payoutData } from "../../adapters/settlement/X402Payouts.ts"
import { Payouts } from "../../src/Payouts.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import { auditOf } from "./support/Audit.ts"
import {
  eventually,
  fileHandoff,
  freshNonce,
  freshPayee,
  receiptsOf,
  TestChain,
  unlockWith,
  x402DeskOn
} from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import { attacker } from "./support/Frontrun.ts"

const PRICE = 400_000n

const run = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.orDie(statement(sql)))

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`the audit over ${backend.name}`, () => {
    layer(x402DeskOn(backend.layer), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("names each way the ledger and the chain can disagree, and passes once they agree again", () =>
        Effect.gen(function*() {
          const testChain = yield* TestChain
          const { chain } = testChain
          const payee = freshPayee()
          const { id } = yield* fileHandoff(0.4, payee)
          const buyer = newAgentId()
          const bought = yield* unlockWith(id, buyer, {
            "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE))
          })
          expect(bought.status).toBe(200)
          const { receiptId } = bought.json.receipt
          const payouts = yield* Payouts
          yield* eventually(
            Effect.zipRight(payouts.runOnce, receiptsOf(buyer)),
            (_) => _[0]?.filerPayoutStatus === "sent",
            50
          )
          const clean = yield* auditOf(testChain)
          expect(clean.discrepancies).toEqual([])
          expect(clean.summary.join("\n")).toContain("x402 receipts: 1, 0.4 USDC; paid into")

          // The desk now pays into another DESK_PAY_TO (or audits the database another desk shares, with its own):
          // the receipt is checked against the address its buyer signed for, which still holds its payment.
          const elsewhere = chain.accounts.other.address
          const rotated = yield* auditOf({ ...testChain, settings: { ...testChain.settings, payTo: elsewhere } })
          expect(rotated.discrepancies).toEqual([])
          expect(rotated.summary.join("\n")).toContain(
            `x402 receipts: 1, 0.4 USDC; paid into ${elsewhere}, ${chain.accounts.desk.address} by their ` +
              "authorizations: 0.4 USDC"
          )

          // A receipt pointing at a log that is not its transfer: the receipt, the unmatched payment and the totals.
          yield* run((sql) =>
            sql`UPDATE receipts SET payment_log_index = payment_log_index + 7 WHERE receipt_id = ${receiptId}`
          )
          const moved = (yield* auditOf(testChain)).discrepancies
          expect(moved).toHaveLength(3)
          expect(moved[0]).toContain(
            `receipt ${receiptId}: ${bought.json.receipt.txHash} holds no transfer of 0.4 USDC`
          )
          expect(moved[1]).toMatch(
            /^payment 0x[0-9a-f]{64}#\d+: 0.4 USDC from 0x.* paid the desk; its claim is settled by another transfer/
          )
          expect(moved[2]).toBe(
            "the desk wallet received 0 USDC for x402 receipts; the ledger records 0.4 USDC of x402 receipts"
          )
          yield* run((sql) =>
            sql`UPDATE receipts SET payment_log_index = payment_log_index - 7 WHERE receipt_id = ${receiptId}`
          )

          // A payout mined but recorded as failed.
          yield* run((sql) => sql`UPDATE payouts SET status = 'failed' WHERE receipt_id = ${receiptId}`)
          const unsent = (yield* auditOf(testChain)).discrepancies
          expect(unsent[0]).toMatch(new RegExp(`^payout ${receiptId}: mined in 0x[0-9a-f]{64}, recorded as failed`))
          expect(unsent[1]).toBe("0.36 USDC left the desk wallet as payouts; the ledger records 0 USDC sent")
          yield* run((sql) => sql`UPDATE payouts SET status = 'sent' WHERE receipt_id = ${receiptId}`)
          expect((yield* auditOf(testChain)).discrepancies).toEqual([])

          // A buyer charged by an authorization whose claim failed: the desk kept the money and gave no receipt.
          const nonce = freshNonce()
          const lost = newAgentId()
          yield* run((sql) => sql`INSERT INTO agents (id) VALUES (${lost})`)
          yield* run((sql) =>
            sql`INSERT INTO settlements (payer, handoff_seq, price_micro, spend_micro, x402_version, payer_address, nonce,
                valid_before, from_block, payment, status, failure_reason)
              SELECT ${lost}, handoff_seq, price_micro, 0, 1, payer_address, ${nonce}, valid_before, from_block, payment,
                'failed', 'authorization_expired'
              FROM settlements WHERE receipt_id = ${receiptId}`
          )
          yield* Effect.promise(() =>
            attacker(chain, chain.accounts.buyer).frontRun(chain.accounts.other, [{
              nonce,
              to: chain.accounts.desk.address,
              value: PRICE
            }])
          )
          const charged = (yield* auditOf(testChain)).discrepancies
          expect(charged).toEqual([
            expect.stringMatching(
              new RegExp(`paid the desk; its claim is failed \\(authorization_expired\\): the buyer holds no receipt`)
            )
          ])
          yield* run((sql) =>
            sql`UPDATE settlements SET status = 'pending', failure_reason = NULL WHERE nonce = ${nonce}`
          )
          const settling = yield* auditOf(testChain)
          expect(settling.discrepancies).toEqual([])
          expect(settling.notes).toEqual([expect.stringContaining("its claim is still pending")])
          yield* run((sql) => sql`DELETE FROM settlements WHERE nonce = ${nonce}`)

          // The same payout mined twice.
          const desk = createWalletClient({
            chain: chain.chain,
            transport: http(chain.rpcUrl),
            account: privateKeyToAccount(chain.accounts.desk.privateKey)
          })
          yield* Effect.promise(() =>
            desk.sendTransaction({ to: chain.tokenAddress, data: payoutData(payee, 360_000, receiptId) })
          )
          const twice = (yield* auditOf(testChain)).discrepancies
          expect(twice).toContainEqual(expect.stringMatching(new RegExp(`^payout ${receiptId}: paid 2 times`)))
          expect(twice).toContainEqual("0.72 USDC left the desk wallet as payouts; the ledger records 0.36 USDC sent")
        }))
    })
  })
}
