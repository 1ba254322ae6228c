import { x402Client, x402HTTPClient } from "@x402/core/client"
import type { Network } from "@x402/core/types"
import { toClientEvmSigner } from "@x402/evm"
import { registerExactEvmScheme } from "@x402/evm/exact/client"
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1"
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch"
import { randomBytes } from "node:crypto"
import { parseArgs } from "node:util"
import type { Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"

// Buys one handoff the way any x402 agent would: an unmodified @x402/fetch client with a viem account.
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    desk: { type: "string", default: process.env["DESK_URL"] ?? "http://127.0.0.1:8402" },
    agent: { type: "string", default: process.env["BUYER_AGENT_ID"] ?? `did:desk:${randomBytes(16).toString("hex")}` },
    "max-usd": { type: "string", default: "1" }
  }
})
const [id] = positionals
const key = process.env["BUYER_PRIVATE_KEY"]
if (id === undefined || key === undefined) {
  console.error("usage: BUYER_PRIVATE_KEY=0x... npm run buy -- DESK-<n> [--desk URL] [--agent did:desk:...] [--max-usd 1]")
  process.exit(1)
}

const status = await (await fetch(`${values.desk}/api/status`)).json() as { network: keyof typeof EVM_NETWORK_CHAIN_ID_MAP; assetAddress: string }
const client = registerExactEvmScheme(new x402Client(), { signer: toClientEvmSigner(privateKeyToAccount(key as Hex)) })
// x402 clients pay only assets they know (real USDC) unless told otherwise: allow the desk's asset, up to --max-usd.
const cap = String(Math.round(Number(values["max-usd"]) * 1_000_000))
client.setSpendControls({
  allowedAssets: [
    { network: `eip155:${EVM_NETWORK_CHAIN_ID_MAP[status.network]}` as Network, asset: status.assetAddress, maxAmountPerPayment: cap },
    { network: status.network as Network, asset: status.assetAddress, maxAmountPerPayment: cap }
  ]
})
const pay = wrapFetchWithPayment(fetch, new x402HTTPClient(client))

const response = await pay(`${values.desk}/api/handoffs/${id}/unlock`, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json", "x-agent-id": values.agent },
  body: JSON.stringify({ payer: values.agent })
})
const settlement = response.headers.get("payment-response") ?? response.headers.get("x-payment-response")
console.log(JSON.stringify({
  status: response.status,
  agent: values.agent,
  settlement: settlement === null ? null : decodePaymentResponseHeader(settlement),
  answer: await response.json()
}, null, 2))
if (response.status === 200) {
  const body = await fetch(`${values.desk}/api/handoffs/${id}/body`, { headers: { accept: "application/json", "x-agent-id": values.agent } })
  console.log(`body: ${body.status}, ${((await body.json()) as { body?: string }).body?.length ?? 0} characters`)
}
