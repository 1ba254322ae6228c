import { x402Facilitator } from "@x402/core/facilitator"
import { toFacilitatorEvmSigner } from "@x402/evm"
import { ExactEvmScheme } from "@x402/evm/exact/facilitator"
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/facilitator"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createWalletClient, type Hex, http, publicActions } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import type { LocalChain } from "../../../adapters/chain/LocalChain.ts"

/**
 * An x402 facilitator over HTTP (GET /supported, POST /verify, POST /settle), as a third party runs it:
 * x402's own exact EVM facilitator with its own wallet on the local chain. A hosted one that wants credentials is
 * `requireHeaders`: a call without every one of them is answered 401, as a hosted facilitator answers it.
 */
export const startFacilitator = async (
  chain: LocalChain,
  key: Hex,
  options: { readonly requireHeaders?: Readonly<Record<string, string>> } = {}
) => {
  const wallet = createWalletClient({
    chain: chain.chain,
    transport: http(chain.rpcUrl),
    account: privateKeyToAccount(key)
  })
    .extend(publicActions)
  const signer = toFacilitatorEvmSigner({
    ...wallet,
    address: wallet.account.address,
    // x402's structural signer types typed data loosely; viem's overloads want the literal shape.
    verifyTypedData: (args) => wallet.verifyTypedData(args as Parameters<typeof wallet.verifyTypedData>[0])
  })
  const facilitator = new x402Facilitator()
    .register(`eip155:${chain.chainId}`, new ExactEvmScheme(signer))
    .registerV1("base-sepolia" as `${string}:${string}`, new ExactEvmSchemeV1(signer))
  let calls = 0
  let refused = 0
  // What the desk asked to settle, as sent: the payload a facilitator's Bazaar catalog would read. Asserted
  // field by field, so `any` keeps the assertions short.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const settled: Array<{ readonly paymentPayload: any; readonly paymentRequirements: any }> = []
  const authorized = (headers: Record<string, string | Array<string> | undefined>) =>
    Object.entries(options.requireHeaders ?? {}).every(([name, value]) => headers[name.toLowerCase()] === value)

  const server = createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk)).on("end", async () => {
      calls++
      const reply = (status: number, value: unknown) =>
        response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value))
      if (!authorized(request.headers)) {
        refused++
        return reply(401, { error: "unauthorized" })
      }
      try {
        if (request.method === "GET" && request.url === "/supported") return reply(200, facilitator.getSupported())
        const { paymentPayload, paymentRequirements } = JSON.parse(body)
        if (request.url === "/verify") return reply(200, await facilitator.verify(paymentPayload, paymentRequirements))
        if (request.url === "/settle") {
          settled.push({ paymentPayload, paymentRequirements })
          return reply(200, await facilitator.settle(paymentPayload, paymentRequirements))
        }
        reply(404, { error: "not found" })
      } catch (error) {
        reply(500, { error: String(error) })
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    refused: () => refused,
    settled: () => settled,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
