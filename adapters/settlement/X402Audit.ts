import { Data, Effect, Option, Redacted } from "effect"
import {
  decodeEventLog,
  getAbiItem,
  getAddress,
  type Hex,
  hexToString,
  isAddress,
  isAddressEqual,
  type Log,
  type Transaction,
  type TransactionReceipt
} from "viem"
import { privateKeyToAddress } from "viem/accounts"
import type { LedgerSnapshot } from "../../src/Domain/LedgerSnapshot.ts"
import { toUsd } from "../../src/Domain/Money.ts"
import { makeChain, tokenAbi } from "./X402Chain.ts"
import type { X402Settings } from "./X402Config.ts"

export interface AuditReport {
  /** Each way the ledger and the chain disagree; the audit passes when there is none. */
  readonly discrepancies: ReadonlyArray<string>
  /** What is worth knowing and is not wrong (money paid to the desk that no unlock named, claims still settling). */
  readonly notes: ReadonlyArray<string>
  readonly summary: ReadonlyArray<string>
}

export class AuditFailed extends Data.TaggedError("AuditFailed")<{ readonly message: string }> {}

const TRANSFER_SELECTOR = "0xa9059cbb"
/** A `transfer(address,uint256)` call is 4 + 32 + 32 bytes: a payout's reference follows it. */
const TRANSFER_CALL_HEX = 2 + 8 + 128

export const referenceOf = (input: Hex): string | null => {
  if (!input.toLowerCase().startsWith(TRANSFER_SELECTOR) || input.length <= TRANSFER_CALL_HEX) return null
  try {
    return hexToString(`0x${input.slice(TRANSFER_CALL_HEX)}`)
  } catch {
    return null
  }
}

const usd = (micro: bigint) => `${toUsd(Number(micro))} USDC`

const describe = (error: unknown) => (error instanceof Error ? error.message.split("\n")[0]! : String(error))

type AnyLog = Log<bigint, number, false>

/** The address a receipt or claim was paid to: its buyer's signed `payTo`, else (none stored) the configured one. */
const paidTo = (stored: string | null, configured: `0x${string}`): `0x${string}` =>
  stored !== null && isAddress(stored, { strict: false }) ? getAddress(stored) : configured

/**
 * Reconciles the database with the chain, read at one head block:
 * - every x402 receipt's transfer exists, is the one its own authorization emitted (from the buyer to payTo, of
 *   exactly the price), and backs no other receipt;
 * - every `sent` payout's transaction is mined, successful, from the desk wallet, carries its receipt's reference
 *   and moves its amount to its address; no payout reference is mined twice, none is mined but recorded unsent;
 * - every authorization-backed payment into payTo that a claim named has its receipt (or its claim is still
 *   pending), and the totals into and out of the desk wallet equal the ledger's.
 * Logs are scanned in bounded chunks from the earliest block the database knows, so it works on a remote RPC.
 */
export const audit = (settings: X402Settings, db: LedgerSnapshot) =>
  Effect.gen(function*() {
    const chain = makeChain(settings)
    const client = chain.publicClient
    const payTo = settings.payTo
    const wallet = Option.match(settings.walletKey, {
      onNone: () => payTo,
      onSome: (key) => privateKeyToAddress(Redacted.value(key))
    })
    const token = settings.asset.address
    const discrepancies: Array<string> = []
    const notes: Array<string> = []
    const summary: Array<string> = []

    const work = async () => {
      // Read after the database: every receipt's transfer was mined at or before this head.
      const head = await client.getBlockNumber({ cacheTime: 0 })
      const receipts = new Map<string, TransactionReceipt | null>()
      const transactions = new Map<string, Transaction | null>()
      const receiptOf = async (hash: string) => {
        if (!receipts.has(hash)) {
          receipts.set(
            hash,
            await client.getTransactionReceipt({ hash: hash as Hex }).catch(() => null)
          )
        }
        return receipts.get(hash)!
      }
      const transactionOf = async (hash: string) => {
        if (!transactions.has(hash)) {
          transactions.set(
            hash,
            await client.getTransaction({ hash: hash as Hex }).catch(() => null)
          )
        }
        return transactions.get(hash)!
      }
      const decode = (log: AnyLog | undefined) => {
        if (log === undefined || !isAddressEqual(log.address, token)) return undefined
        try {
          return decodeEventLog({ abi: tokenAbi, data: log.data, topics: log.topics })
        } catch {
          return undefined
        }
      }
      const authorizationOf = (log: AnyLog | undefined) => {
        const event = decode(log)
        return event?.eventName === "AuthorizationUsed" ? event.args : undefined
      }
      const transferOf = (log: AnyLog | undefined) => {
        const event = decode(log)
        return event?.eventName === "Transfer" ? event.args : undefined
      }

      // 1. Every x402 receipt: its own authorization's transfer, once.
      const backing = new Map<string, Array<string>>()
      let receiptTotal = 0n
      let earliest = head + 1n
      for (const receipt of db.receipts) {
        const name = `receipt ${receipt.receipt_id}`
        receiptTotal += BigInt(receipt.price_micro)
        if (receipt.payment_chain_id !== null && receipt.payment_chain_id !== settings.chainId) {
          discrepancies.push(
            `${name}: paid on chain ${receipt.payment_chain_id}, not on the audited chain ${settings.chainId}`
          )
          continue
        }
        const mined = await receiptOf(receipt.payment_tx_hash)
        if (mined === null || mined.status !== "success") {
          discrepancies.push(`${name}: its payment transaction ${receipt.payment_tx_hash} is not mined successfully`)
          continue
        }
        const usedAt = receipt.payment_log_index !== null
          ? receipt.payment_log_index - 1
          : mined.logs.find((log) => {
            const used = authorizationOf(log)
            return used !== undefined && isAddressEqual(used.authorizer, getAddress(receipt.payment_payer_address)) &&
              used.nonce.toLowerCase() === receipt.payment_nonce.toLowerCase()
          })?.logIndex ?? -2
        const used = authorizationOf(mined.logs.find((log) => log.logIndex === usedAt))
        const transfer = transferOf(mined.logs.find((log) => log.logIndex === usedAt + 1))
        const own = used !== undefined && isAddressEqual(used.authorizer, getAddress(receipt.payment_payer_address)) &&
          used.nonce.toLowerCase() === receipt.payment_nonce.toLowerCase()
        const pays = transfer !== undefined &&
          isAddressEqual(transfer.from, getAddress(receipt.payment_payer_address)) &&
          isAddressEqual(transfer.to, paidTo(receipt.pay_to, payTo)) && transfer.value === BigInt(receipt.price_micro)
        if (!own || !pays) {
          discrepancies.push(
            `${name}: ${receipt.payment_tx_hash} holds no transfer of ${usd(BigInt(receipt.price_micro))} to ${
              paidTo(receipt.pay_to, payTo)
            } ` +
              `emitted by its authorization ${receipt.payment_nonce}`
          )
          continue
        }
        const key = `${receipt.payment_tx_hash.toLowerCase()}#${usedAt + 1}`
        backing.set(key, [...(backing.get(key) ?? []), receipt.receipt_id])
        if (mined.blockNumber < earliest) earliest = mined.blockNumber
      }
      for (const [key, ids] of backing) {
        if (ids.length > 1) discrepancies.push(`transfer ${key} backs ${ids.length} receipts: ${ids.join(", ")}`)
      }
      for (const claim of db.claims) if (BigInt(claim.from_block) < earliest) earliest = BigInt(claim.from_block)
      for (const payout of db.payouts) {
        if (payout.from_block !== null && BigInt(payout.from_block) < earliest) earliest = BigInt(payout.from_block)
      }

      // 2. Every authorization-backed payment into payTo (each address a buyer signed for, and the configured one):
      // matched by a receipt, or by a claim still settling.
      const claims = new Map(
        db.claims.map((claim) => [`${claim.payer_address.toLowerCase()}:${claim.nonce.toLowerCase()}`, claim])
      )
      const transferEvent = getAbiItem({ abi: tokenAbi, name: "Transfer" })
      let matched = 0n
      let settling = 0n
      let unclaimed = 0n
      let otherIn = 0n
      const payees = new Map(
        [payTo, ...db.receipts.map((_) => paidTo(_.pay_to, payTo)), ...db.claims.map((_) => paidTo(_.pay_to, payTo))]
          .map((address) => [address.toLowerCase(), address])
      )
      const paidIn = await Promise.all(
        [...payees.values()].map((address) => chain.scanLogs(transferEvent, { to: address }, earliest, head))
      )
      for (const log of paidIn.flat()) {
        const value = log.args.value
        const mined = await receiptOf(log.transactionHash)
        const used = authorizationOf(mined?.logs.find((_) => _.logIndex === log.logIndex - 1))
        if (used === undefined || !isAddressEqual(used.authorizer, log.args.from)) {
          otherIn += value
          continue
        }
        const key = `${log.transactionHash.toLowerCase()}#${log.logIndex}`
        if (backing.has(key)) {
          matched += value
          continue
        }
        const claim = claims.get(`${used.authorizer.toLowerCase()}:${used.nonce.toLowerCase()}`)
        if (claim === undefined) {
          unclaimed += value
          notes.push(
            `payment ${key}: ${
              usd(value)
            } from ${used.authorizer} by authorization ${used.nonce}, which no unlock named: ` +
              "nothing was sold for it"
          )
        } else if (claim.status === "pending") {
          settling += value
          notes.push(`payment ${key}: its claim is still pending; the reconciler writes its receipt`)
        } else {
          const state = claim.status === "settled"
            ? `settled by another transfer (receipt ${claim.receipt_id})`
            : `failed (${claim.failure_reason ?? "no reason"}): the buyer holds no receipt for it`
          discrepancies.push(
            `payment ${key}: ${
              usd(value)
            } from ${used.authorizer} by authorization ${used.nonce} paid the desk; its claim is ${state}`
          )
        }
      }
      summary.push(
        `x402 receipts: ${db.receipts.length}, ${usd(receiptTotal)}; paid into ${
          [...payees.values()].join(", ")
        } by their authorizations: ${usd(matched)}`,
        `claims still settling, paid on-chain: ${usd(settling)}; authorization payments no unlock named: ${
          usd(unclaimed)
        }; ` +
          `other transfers in: ${usd(otherIn)}`
      )
      if (matched !== receiptTotal) {
        discrepancies.push(
          `the desk wallet received ${usd(matched)} for x402 receipts; the ledger records ${
            usd(receiptTotal)
          } of x402 receipts`
        )
      }

      // 3. Every sent payout: mined, successful, its reference, its amount to its address.
      const payouts = new Map(db.payouts.map((payout) => [payout.receipt_id, payout]))
      let sentTotal = 0n
      let sentCount = 0
      for (const payout of db.payouts) {
        if (payout.status !== "sent") continue
        sentCount++
        sentTotal += BigInt(payout.amount_micro)
        const name = `payout ${payout.receipt_id}`
        const mined = payout.tx_hash === null ? null : await receiptOf(payout.tx_hash)
        const tx = payout.tx_hash === null ? null : await transactionOf(payout.tx_hash)
        if (mined === null || tx === null || mined.status !== "success") {
          discrepancies.push(`${name}: recorded sent in ${payout.tx_hash}, which is not mined successfully`)
          continue
        }
        const moved = mined.logs.some((log) => {
          const transfer = transferOf(log)
          return transfer !== undefined && isAddressEqual(transfer.from, wallet) && payout.to_address !== null &&
            isAddressEqual(transfer.to, getAddress(payout.to_address)) && transfer.value === BigInt(payout.amount_micro)
        })
        if (!isAddressEqual(tx.from, wallet) || referenceOf(tx.input) !== payout.receipt_id || !moved) {
          discrepancies.push(
            `${name}: ${payout.tx_hash} is not the desk wallet's transfer of ${usd(BigInt(payout.amount_micro))} to ` +
              `${payout.to_address} carrying its reference`
          )
        }
      }

      // 4. Every transfer out of the desk wallet that carries a payout reference: one per payout, and recorded.
      const mined = new Map<string, Array<string>>()
      let paidOut = 0n
      let otherOut = 0n
      for (const log of await chain.scanLogs(transferEvent, { from: wallet }, earliest, head)) {
        const tx = await transactionOf(log.transactionHash)
        const reference = tx === null ? null : referenceOf(tx.input)
        if (reference === null || !payouts.has(reference)) {
          if (reference !== null) {
            discrepancies.push(`transfer ${log.transactionHash} carries reference ${reference}, which no payout has`)
          }
          otherOut += log.args.value
          continue
        }
        paidOut += log.args.value
        mined.set(reference, [...(mined.get(reference) ?? []), log.transactionHash])
        const payout = payouts.get(reference)!
        if (payout.status !== "sent" || payout.tx_hash?.toLowerCase() !== log.transactionHash.toLowerCase()) {
          discrepancies.push(
            `payout ${reference}: mined in ${log.transactionHash}, recorded as ${payout.status} ${
              payout.tx_hash ?? "(no transaction)"
            }`
          )
        }
      }
      for (const [reference, hashes] of mined) {
        if (hashes.length > 1) {
          discrepancies.push(`payout ${reference}: paid ${hashes.length} times (${hashes.join(", ")})`)
        }
      }
      summary.push(
        `payouts sent: ${sentCount}, ${usd(sentTotal)}; out of ${wallet} with a payout reference: ${usd(paidOut)}; ` +
          `other transfers out: ${usd(otherOut)}`,
        `chain ${settings.chainId}, blocks ${earliest > head ? "none" : `${earliest} to ${head}`}`
      )
      if (paidOut !== sentTotal) {
        discrepancies.push(`${usd(paidOut)} left the desk wallet as payouts; the ledger records ${usd(sentTotal)} sent`)
      }
    }

    yield* Effect.tryPromise({
      try: work,
      catch: (error) => new AuditFailed({ message: `the chain RPC did not answer the audit: ${describe(error)}` })
    })
    return { discrepancies, notes, summary } satisfies AuditReport
  })
