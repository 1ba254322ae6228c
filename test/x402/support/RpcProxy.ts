import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { type Hex, keccak256, parseTransaction, toFunctionSelector, toHex } from "viem"

/** What the proxy does with one JSON-RPC call; `pass` forwards it untouched. */
export type Fault =
  | "pass"
  /** Answer with a JSON-RPC error; nothing reaches the chain. */
  | "refuse"
  /** Forward to the chain, then cut the connection: the call took effect but its answer is lost. */
  | "lose-answer"
  /** As lose-answer, and the whole RPC goes down with it (`down` is set): nothing after it can be read. */
  | "lose-answer-then-down"
  /** Never forward, never answer: the caller hangs until its own timeout. */
  | "hang"
  /** Forward to the chain and never answer: the call took effect while the caller still waits. */
  | "forward-then-hang"
  /** Cut the connection without forwarding: the request was lost on its way. */
  | "drop"
  /** Forward the call to the chain twice (a request delivered twice), answer with the first answer. */
  | "duplicate"
  /**
   * Forward, and answer only when the same call (method and params) arrives again, as a client's retry after
   * its timeout does: every call then takes the client's timeout plus a second round trip.
   */
  | "answer-on-retry"
  /** As answer-on-retry, and the retry too is answered only after this long (then forwarded: the answer is that moment's). */
  | { readonly answerRetryAfterMs: number }
  /** Wait this long, then forward and answer (a slow provider). */
  | { readonly delayMs: number }
  /** Forward, run `then` (mine a block, kill a desk...), then answer. */
  | { readonly then: (call: RpcCall) => Promise<void> }

export interface RpcCall {
  readonly method: string
  readonly params: ReadonlyArray<unknown>
}

export interface Seen {
  readonly call: RpcCall
  readonly fault: Fault
}

export interface RpcProxy {
  readonly url: string
  /** Every chain call goes down at once (connection reset), like an RPC provider outage. */
  down: boolean
  /** Decides the fault per call; the default passes everything. */
  rule: (call: RpcCall) => Fault
  /** Resolves with the first call the rule faulted after this was called. */
  readonly nextFault: () => Promise<Seen>
  /** Resolves once a `forward-then-hang` call has reached the chain and been answered there. */
  readonly nextForwarded: () => Promise<Seen>
  /** Every call the rule faulted, oldest first. */
  readonly faulted: Array<Seen>
  /** When the last call arrived (ms since the epoch): a desk that stopped calling is idle. */
  lastCallAt: number
  readonly close: () => Promise<void>
}

const TRANSFER = "0xa9059cbb"
const TRANSFER_WITH_AUTHORIZATION = ["0xe3ee160e", "0xcf092995"]

const rawTxData = (call: RpcCall): Hex | undefined => {
  if (call.method !== "eth_sendRawTransaction") return undefined
  try {
    return parseTransaction(call.params[0] as Hex).data
  } catch {
    return undefined
  }
}

/** A payout: the desk wallet's USDC `transfer`, optionally the one for this receipt (its id rides after the call data). */
export const isPayoutBroadcast = (call: RpcCall, receiptId?: string) => {
  const data = rawTxData(call)
  if (data === undefined || !data.startsWith(TRANSFER)) return false
  return receiptId === undefined || data.endsWith(toHex(receiptId).slice(2))
}

/** A settlement: the buyer's `transferWithAuthorization`, submitted by the desk. */
export const isSettlementBroadcast = (call: RpcCall) => {
  const data = rawTxData(call)
  return data !== undefined && TRANSFER_WITH_AUTHORIZATION.some((selector) => data.startsWith(selector))
}

/** A read (`eth_call`, or `eth_estimateGas` for a transaction being prepared) of this function, e.g. "authorizationState(address,bytes32)". */
export const isCallOf = (
  call: RpcCall,
  signature: string,
  methods: ReadonlyArray<string> = ["eth_call"]
) => {
  if (!methods.includes(call.method)) return false
  const request = call.params[0] as { data?: string; input?: string } | undefined
  const data = request?.data ?? request?.input
  return typeof data === "string" && data.startsWith(toFunctionSelector(signature))
}

/**
 * The payout of this receipt being prepared: viem fills the transaction (`eth_fillTransaction` where the node has
 * it, else a gas estimate) with the same call data the signed transaction will carry.
 */
export const isPayoutPreparation = (call: RpcCall, receiptId?: string) => {
  if (!isCallOf(call, "transfer(address,uint256)", ["eth_fillTransaction", "eth_estimateGas"])) return false
  const request = call.params[0] as { data?: string; input?: string }
  return receiptId === undefined || (request.data ?? request.input ?? "").endsWith(toHex(receiptId).slice(2))
}

/** A call whose parameters carry these bytes anywhere (a nonce, a reference, a hash; raw transactions included). */
export const carries = (call: RpcCall, hex: string) =>
  JSON.stringify(call.params).toLowerCase().includes(hex.replace(/^0x/, "").toLowerCase())

export const txHashOf = (call: RpcCall) => keccak256(call.params[0] as Hex)

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let body = ""
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk)).on("end", () => resolve(body)).on(
      "error",
      reject
    )
  })

/**
 * A JSON-RPC proxy in front of anvil that injects the faults a real provider has (outage, refused
 * broadcast, lost answer, hang), so the desk's own chain client meets them exactly as in production.
 */
export const startRpcProxy = async (upstream: string): Promise<RpcProxy> => {
  const waiters: Array<(seen: Seen) => void> = []
  const forwarded: Array<(seen: Seen) => void> = []
  const hanging = new Set<ServerResponse>()
  const seenOnce = new Set<string>()

  const forward = (body: string) =>
    fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body }).then((_) => _.text())

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const body = await readBody(request)
    proxy.lastCallAt = Date.now()
    if (proxy.down) {
      response.socket?.destroy()
      return
    }
    const parsed = JSON.parse(body) as { id: unknown; method: string; params?: Array<unknown> }
    const call: RpcCall = { method: parsed.method, params: parsed.params ?? [] }
    const fault = proxy.rule(call)
    if (fault !== "pass") {
      proxy.faulted.push({ call, fault })
      waiters.splice(0).forEach((resolve) => resolve({ call, fault }))
    }
    const answer = async () => response.writeHead(200, { "content-type": "application/json" }).end(await forward(body))
    if (typeof fault === "object") {
      if ("answerRetryAfterMs" in fault) {
        const key = JSON.stringify([call.method, call.params])
        if (seenOnce.delete(key)) {
          await new Promise((resolve) => setTimeout(resolve, fault.answerRetryAfterMs))
          return answer()
        }
        seenOnce.add(key)
        hanging.add(response)
        await forward(body)
        return
      }
      if ("delayMs" in fault) {
        await new Promise((resolve) => setTimeout(resolve, fault.delayMs))
        return answer()
      }
      const answered = await forward(body)
      await fault.then(call)
      response.writeHead(200, { "content-type": "application/json" }).end(answered)
      return
    }
    switch (fault) {
      case "drop":
        response.socket?.destroy()
        return
      case "duplicate": {
        const first = await forward(body)
        await forward(body)
        response.writeHead(200, { "content-type": "application/json" }).end(first)
        return
      }
      case "answer-on-retry": {
        const key = JSON.stringify([call.method, call.params])
        if (seenOnce.delete(key)) return answer()
        seenOnce.add(key)
        hanging.add(response)
        await forward(body)
        return
      }
      case "pass":
        response.writeHead(200, { "content-type": "application/json" }).end(await forward(body))
        return
      case "refuse":
        response.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({ jsonrpc: "2.0", id: parsed.id, error: { code: -32000, message: "rpc proxy: refused" } })
        )
        return
      case "lose-answer":
      case "lose-answer-then-down":
        await forward(body)
        if (fault === "lose-answer-then-down") proxy.down = true
        response.socket?.destroy()
        return
      case "hang":
        hanging.add(response)
        return
      case "forward-then-hang":
        hanging.add(response)
        await forward(body)
        forwarded.splice(0).forEach((resolve) => resolve({ call, fault }))
        return
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => response.socket?.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  const proxy: RpcProxy = {
    url: `http://127.0.0.1:${port}`,
    down: false,
    rule: () => "pass",
    nextFault: () => new Promise<Seen>((resolve) => waiters.push(resolve)),
    nextForwarded: () => new Promise<Seen>((resolve) => forwarded.push(resolve)),
    faulted: [],
    lastCallAt: 0,
    close: () =>
      new Promise<void>((resolve) => {
        hanging.forEach((response) => response.socket?.destroy())
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  return proxy
}
