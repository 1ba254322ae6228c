import { parseArgs } from "node:util"
import * as LocalChain from "../adapters/chain/LocalChain.ts"
import { deskUrl, fail, oneLine } from "./cli.ts"

const USAGE = `usage: npm run chain [-- --port <rpc port>]

Starts anvil (base-sepolia chain id) with a test EIP-3009 USDC, funds a buyer, and prints the exports for the
desk (npm start) and the buyer (npm run buy).
  --port, PORT_CHAIN   the chain's JSON-RPC port (default 8545; 0 lets the OS pick one)
  PORT, DESK_URL       where the desk will listen: PORT (default 8402) or a full DESK_URL; printed as
                       PORT, DESK_PUBLIC_URL and DESK_URL so the desk and npm run buy agree`

const { values } = (() => {
  try {
    return parseArgs({ options: { port: { type: "string", short: "p" }, help: { type: "boolean", short: "h" } } })
  } catch (error) {
    return fail("chain", `${oneLine(error)} (npm run chain -- --help)`)
  }
})()
if (values.help) {
  console.log(USAGE)
  process.exit(0)
}
const rawPort = values.port ?? process.env["PORT_CHAIN"] ?? "8545"
const port = Number(rawPort)
if (!/^\d+$/.test(rawPort) || port > 65_535) {
  fail("chain", `invalid chain port "${rawPort}" (--port or PORT_CHAIN, 0-65535)`)
}
const desk = deskUrl("chain")

const chain = await LocalChain.start({ port }).catch((error: unknown) =>
  fail("chain", `anvil did not start on port ${port}: ${oneLine(error)} (pick another with --port or PORT_CHAIN)`)
)
const { buyer, filer } = chain.accounts

console.log(`# Local base-sepolia (chain id ${chain.chainId}) with TestUsdc at ${chain.tokenAddress}.
# Export these in the shell of the desk (npm start) and in the shell of the buyer (npm run buy):
export DESK_CHAIN_RPC_URL=${chain.rpcUrl}
export DESK_NETWORK=base-sepolia
export DESK_ASSET_ADDRESS=${chain.tokenAddress}
export DESK_ASSET_NAME=USDC
export DESK_ASSET_VERSION=2
export DESK_PAY_TO=${chain.accounts.desk.address}
export DESK_WALLET_PRIVATE_KEY=${chain.accounts.desk.privateKey}
# A local chain has no block explorer.
export DESK_EXPLORER_URL=
# Where the desk listens (set PORT or DESK_URL before npm run chain to change it).
export PORT=${desk.port}
export DESK_PUBLIC_URL=${desk.url}
export DESK_URL=${desk.url}

# To try the loop: the buyer holds ${LocalChain.buyerStartingBalance / 1_000_000n} USDC, the filer starts empty.
export BUYER_ADDRESS=${buyer.address}
export BUYER_PRIVATE_KEY=${buyer.privateKey}
export FILER_ADDRESS=${filer.address}
export FILER_PRIVATE_KEY=${filer.privateKey}`)
console.error("\nChain is up; Ctrl-C stops it.")

const shutdown = () => {
  void chain.stop().then(() => process.exit(0))
}
process.once("SIGINT", shutdown)
process.once("SIGTERM", shutdown)
