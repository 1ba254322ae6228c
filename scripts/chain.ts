import { parseArgs } from "node:util"
import * as LocalChain from "../adapters/chain/LocalChain.ts"

const { values } = parseArgs({ options: { port: { type: "string", short: "p" } } })
const port = Number(values.port ?? process.env["PORT_CHAIN"] ?? 8545)
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`invalid port: ${values.port ?? process.env["PORT_CHAIN"]}`)
  process.exit(1)
}

const chain = await LocalChain.start({ port })
const { desk, buyer, filer } = chain.accounts

console.log(`# Local base-sepolia (chain id ${chain.chainId}) with TestUsdc at ${chain.tokenAddress}.
# Export these before starting the desk (npm start) in another shell:
export DESK_CHAIN_RPC_URL=${chain.rpcUrl}
export DESK_NETWORK=base-sepolia
export DESK_ASSET_ADDRESS=${chain.tokenAddress}
export DESK_ASSET_NAME=USDC
export DESK_ASSET_VERSION=2
export DESK_PAY_TO=${desk.address}
export DESK_WALLET_PRIVATE_KEY=${desk.privateKey}
# A local chain has no block explorer.
export DESK_EXPLORER_URL=

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
