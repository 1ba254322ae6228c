import { x402Client, x402HTTPClient } from "@x402/core/client"
import type { Network } from "@x402/core/types"
import { toClientEvmSigner } from "@x402/evm"
import { registerExactEvmScheme } from "@x402/evm/exact/client"
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1"
import { wrapFetchWithPayment } from "@x402/fetch"
import { randomBytes } from "node:crypto"
import { parseArgs } from "node:util"
import { type Address, createPublicClient, erc20Abi, formatUnits, type Hex, http } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { deskUrl, fail, oneLine } from "./cli.ts"

const USAGE =
  `usage: BUYER_PRIVATE_KEY=0x... npm run buy -- DESK-<n> [--desk URL] [--agent did:desk:...] [--max-usd 1] [--rpc URL]

Buys one handoff the way any x402 agent would (an unmodified @x402/fetch client), reads its body, waits for the
filer's payout and prints the buyer's, the desk's and the filer's USDC before and after.
  --desk, DESK_URL, PORT   the desk: --desk, else DESK_URL, else http://127.0.0.1:PORT (PORT defaults to 8402)
  --rpc, DESK_CHAIN_RPC_URL  the chain, to read balances (npm run chain prints it)
  --agent, BUYER_AGENT_ID  the buyer's desk id (a fresh one by default)
  --max-usd                the most this client will pay (default 1)`

const parsed = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        desk: { type: "string" },
        agent: {
          type: "string",
          default: process.env["BUYER_AGENT_ID"] ?? `did:desk:${randomBytes(16).toString("hex")}`
        },
        "max-usd": { type: "string", default: "1" },
        rpc: { type: "string" },
        help: { type: "boolean", short: "h" }
      }
    })
  } catch (error) {
    return fail("buy", `${oneLine(error)} (npm run buy -- --help)`)
  }
})()
const { positionals, values } = parsed
if (values.help) {
  console.log(USAGE)
  process.exit(0)
}
const [id] = positionals
const key = process.env["BUYER_PRIVATE_KEY"]
if (id === undefined || key === undefined) {
  fail("buy", "needs a handoff id and BUYER_PRIVATE_KEY (npm run buy -- --help)")
}
if (!/^0x[0-9a-fA-F]{64}$/.test(key!)) fail("buy", "BUYER_PRIVATE_KEY must be 0x followed by 64 hex characters")
const maxUsd = Number(values["max-usd"])
if (!(maxUsd > 0)) fail("buy", `--max-usd must be a positive number of USD, not "${values["max-usd"]}"`)
const desk = deskUrl("buy", values.desk).url
const rpc = values.rpc ?? process.env["DESK_CHAIN_RPC_URL"]

/** A JSON GET on the desk; any failure to reach it is one line that says where the script looked. */
const getJson = async <A>(path: string, headers: Record<string, string> = {}): Promise<{ status: number; json: A }> => {
  const response = await fetch(`${desk}${path}`, { headers: { accept: "application/json", ...headers } }).catch((
    error
  ) =>
    fail(
      "buy",
      `the desk at ${desk} does not answer: ${
        oneLine(error)
      }. Start it (npm start) or point --desk, DESK_URL or PORT at it`
    )
  )
  return { status: response.status, json: (await response.json().catch(() => ({}))) as A }
}

interface Status {
  readonly x402Ready: boolean
  readonly network: keyof typeof EVM_NETWORK_CHAIN_ID_MAP
  readonly assetAddress: Address | null
  readonly payTo: Address | null
}

const status = (await getJson<Status>("/api/status")).json
if (!status.x402Ready || status.assetAddress === null || status.payTo === null) {
  fail(
    "buy",
    `the desk at ${desk} has no chain configured (x402Ready false): start it with the exports of npm run chain`
  )
}
const preview = await getJson<{ filerDid?: string; priceUsd?: number; message?: string }>(`/api/handoffs/${id}`)
if (preview.status !== 200) fail("buy", `${id}: ${preview.json.message ?? `HTTP ${preview.status}`}`)
const filer = await getJson<{ payoutAddress?: Address | null }>(`/api/agents/${preview.json.filerDid}`)

const account = privateKeyToAccount(key as Hex)
const holders: ReadonlyArray<readonly [string, Address | null | undefined]> = [
  ["buyer", account.address],
  ["desk", status.payTo],
  ["filer", filer.json.payoutAddress]
]
const chain = rpc === undefined
  ? undefined
  : createPublicClient({ transport: http(rpc, { retryCount: 0, timeout: 10_000 }) })
const balances = async (): Promise<Array<bigint | undefined>> =>
  chain === undefined
    ? holders.map(() => undefined)
    : Promise.all(holders.map(([, address]) =>
      address
        ? chain.readContract({
          address: status.assetAddress!,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [address]
        })
          .catch((error) => fail("buy", `cannot read balances at ${rpc}: ${oneLine(error)}`))
        : Promise.resolve(undefined)
    ))
const before = await balances()

const client = registerExactEvmScheme(new x402Client(), { signer: toClientEvmSigner(account) })
// x402 clients pay only assets they know (real USDC) unless told otherwise: allow the desk's asset, up to --max-usd.
const cap = String(Math.round(maxUsd * 1_000_000))
client.setSpendControls({
  allowedAssets: [
    {
      network: `eip155:${EVM_NETWORK_CHAIN_ID_MAP[status.network]}` as Network,
      asset: status.assetAddress!,
      maxAmountPerPayment: cap
    },
    { network: status.network as Network, asset: status.assetAddress!, maxAmountPerPayment: cap }
  ]
})
const pay = wrapFetchWithPayment(fetch, new x402HTTPClient(client))

const response = await pay(`${desk}/api/handoffs/${id}/unlock`, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json", "x-agent-id": values.agent },
  body: JSON.stringify({ payer: values.agent })
}).catch((error) => fail("buy", `the unlock of ${id} failed: ${oneLine(error)}`))
type Receipt = { receiptId: string; txHash: string | null; filerPayoutStatus: string; filerPayoutTxHash: string | null }
const answer = (await response.json().catch(() => ({}))) as { receipt?: Receipt; error?: string; message?: string }
if (response.status !== 200 || answer.receipt === undefined) {
  fail(
    "buy",
    `the unlock of ${id} answered ${response.status} ${answer.error ?? ""}: ${answer.message ?? "no message"}`
  )
}
console.log(`desk     ${desk} (${status.network}, USDC ${status.assetAddress})`)
console.log(`buyer    ${values.agent}, paying from ${account.address}`)
console.log(`unlock   ${response.status}, receipt ${answer.receipt!.receiptId}, payment tx ${answer.receipt!.txHash}`)
const body = await getJson<{ body?: string }>(`/api/handoffs/${id}/body`, { "x-agent-id": values.agent })
console.log(`body     ${body.status}, ${body.json.body?.length ?? 0} characters`)

/** The filer's 90 % goes out through the desk's outbox right after the sale: wait (bounded) until it settles. */
const settledPayout = async (): Promise<Receipt | undefined> => {
  for (let attempt = 0; attempt < 60; attempt++) {
    const receipts = await getJson<{ receipts?: ReadonlyArray<Receipt> }>(`/api/receipts?payer=${values.agent}`)
    const receipt = receipts.json.receipts?.find((_) => _.receiptId === answer.receipt!.receiptId)
    if (receipt !== undefined && receipt.filerPayoutStatus !== "pending" && receipt.filerPayoutStatus !== "failed") {
      return receipt
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  return undefined
}
const payout = await settledPayout()
console.log(
  `payout   ${
    payout === undefined
      ? "still pending after 30 s"
      : `${payout.filerPayoutStatus}${payout.filerPayoutTxHash === null ? "" : ` (${payout.filerPayoutTxHash})`}`
  }`
)

if (chain === undefined) {
  console.log("balances need the chain: set DESK_CHAIN_RPC_URL (npm run chain prints it) or --rpc")
} else {
  const after = await balances()
  const usdc = (amount: bigint | undefined) => (amount === undefined ? "-" : formatUnits(amount, 6))
  const change = (from: bigint | undefined, to: bigint | undefined) =>
    from === undefined || to === undefined ? "-" : `${to >= from ? "+" : ""}${formatUnits(to - from, 6)}`
  const rows = holders.map(([name, address], index) => [
    name,
    address ?? "(no payout address)",
    usdc(before[index]),
    usdc(after[index]),
    change(before[index], after[index])
  ])
  const widths = [5, 42, 14, 14, 12]
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, index) => (index < 2 ? cell.padEnd(widths[index]!) : cell.padStart(widths[index]!))).join("  ")
  console.log(`\nUSDC balances\n${line(["", "address", "before", "after", "change"])}`)
  for (const row of rows) console.log(line(row))
}
