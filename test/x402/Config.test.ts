import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Either, Layer, Logger, Option, Redacted, Schedule } from "effect"
import * as X402 from "../../adapters/settlement/X402.ts"
import { x402Settings } from "../../adapters/settlement/X402Config.ts"
import { REACHABLE_FRESH_MS } from "../../adapters/settlement/X402Facilitator.ts"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { deskOn, TestDesk } from "../support/Desk.ts"
import { newAgentId } from "../support/Fixtures.ts"
import {
  chainScoped,
  fileHandoff,
  freshPayee,
  send,
  TestChain,
  unlockWith,
  v2Buyer,
  x402DeskOn
} from "./support/Chain.ts"
import { startFacilitator } from "./support/Facilitator.ts"
import { forger } from "./support/Forge.ts"
import { RemoteFacilitator, remoteFacilitatorDesk } from "./support/RemoteDesk.ts"

const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
const KEY_ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"

const settingsFrom = (env: Record<string, string>) =>
  Effect.runSync(
    Effect.either(Effect.withConfigProvider(x402Settings, ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

const withChain = (env: Record<string, string>) =>
  settingsFrom({ DESK_CHAIN_RPC_URL: "http://127.0.0.1:8545", DESK_WALLET_PRIVATE_KEY: KEY, ...env })

describe("x402 configuration", () => {
  it("defaults to each network's own USDC and EIP-712 domain: a wrong name would break every signature", () => {
    expect(withChain({ DESK_NETWORK: "base" })).toEqual(Either.right(expect.objectContaining({
      network: "base",
      chainId: 8453,
      asset: { address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", name: "USD Coin", version: "2" },
      payTo: KEY_ADDRESS,
      explorerUrl: Option.some("https://basescan.org")
    })))
    expect(withChain({ DESK_NETWORK: "base-sepolia" })).toEqual(Either.right(expect.objectContaining({
      chainId: 84532,
      asset: { address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", name: "USDC", version: "2" },
      explorerUrl: Option.some("https://sepolia.basescan.org")
    })))
    // `npm run chain` prints DESK_EXPLORER_URL= for a chain without an explorer.
    expect(withChain({ DESK_NETWORK: "base-sepolia", DESK_EXPLORER_URL: "" })).toEqual(
      Either.right(expect.objectContaining({ explorerUrl: Option.none() }))
    )
  })

  it("refuses settings that cannot work, naming the variable, and never prints the key", () => {
    const failure = (env: Record<string, string>) => {
      const result = withChain(env)
      expect(Either.isLeft(result)).toBe(true)
      const text = String(Either.getLeft(result).pipe(Option.getOrThrow))
      expect(text).not.toContain(KEY.slice(2))
      return text
    }
    expect(failure({ DESK_NETWORK: "eip155:8453" })).toContain("DESK_NETWORK must be an x402 v1 EVM network name")
    expect(failure({ DESK_NETWORK: "polygon-amoy" })).toContain("DESK_ASSET_ADDRESS is required")
    expect(failure({ DESK_WALLET_PRIVATE_KEY: "0x1234" })).toContain("DESK_WALLET_PRIVATE_KEY must be 0x")
    expect(failure({ DESK_PAY_TO: "0xnope" })).toContain("DESK_PAY_TO")
    // A payTo that cannot pass on what it receives: every sale's USDC would be lost (the desk paid filers anyway).
    expect(failure({ DESK_PAY_TO: "0x0000000000000000000000000000000000000000" })).toContain(
      "DESK_PAY_TO is the zero address"
    )
    expect(failure({ DESK_PAY_TO: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913" })).toContain(
      "DESK_PAY_TO is the USDC token contract itself"
    )
    // A facilitator URL fetch cannot call: refused at startup, not found out by the first buyer (never echoed).
    for (const url of ["notaurl", "ftp://facilitator.example", "https://user:s3cretpw@facilitator.example"]) {
      const text = failure({ DESK_FACILITATOR_URL: url })
      expect(text).toContain("DESK_FACILITATOR_URL must")
      expect(text).not.toContain("s3cretpw")
    }
    const noWallet = settingsFrom({ DESK_CHAIN_RPC_URL: "http://127.0.0.1:8545", DESK_PAY_TO: KEY_ADDRESS })
    expect(String(Either.getLeft(noWallet).pipe(Option.getOrThrow))).toContain(
      "set DESK_WALLET_PRIVATE_KEY, or DESK_FACILITATOR_URL"
    )
    expect(Redacted.isRedacted(Option.getOrThrow(Either.getOrThrow(withChain({})).walletKey))).toBe(true)
  })
})

describe("a desk without chain settings", () => {
  layer(deskOn(Pglite.layer({})), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("writes desk receipts only, says so in /api/status, and refuses X-PAYMENT without charging", () =>
      Effect.gen(function*() {
        expect((yield* send("/api/status")).json).toMatchObject({
          x402Ready: false,
          facilitatorKind: "none",
          facilitatorReachable: false,
          payTo: null,
          payout: { enabled: false }
        })
        const { id } = yield* fileHandoff(0.2)
        const refused = yield* unlockWith(id, newAgentId(), { "x-payment": "eyJ4NDAyVmVyc2lvbiI6MX0=" })
        expect(refused.json).toMatchObject({ error: "payment_invalid", reason: "x402_not_configured", accepts: [] })
        expect(refused.headers.get("payment-required")).toBeNull()
      }))
  })
})

describe("x402 on base's own domain (a local chain with chain id 8453 and a token named USD Coin)", () => {
  const baseDesk = x402DeskOn(Pglite.layer({}), {
    chain: { chainId: 8453, tokenName: "USD Coin", tokenVersion: "2" },
    // Only what an operator on base sets: the domain is left to the defaults.
    settings: (local) =>
      Either.getOrThrow(settingsFrom({
        DESK_CHAIN_RPC_URL: local.rpcUrl,
        DESK_NETWORK: "base",
        DESK_ASSET_ADDRESS: local.asset.address,
        DESK_WALLET_PRIVATE_KEY: Redacted.value(Option.getOrThrow(local.walletKey))
      }))
  })

  layer(baseDesk, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("an off-the-shelf client pays with the default domain; a signature over another name is refused", () =>
      Effect.gen(function*() {
        const { chain } = yield* TestChain
        expect((yield* send("/api/status")).json).toMatchObject({
          network: "base",
          stage: "mainnet",
          eip712: { name: "USD Coin", version: "2" }
        })
        const { id } = yield* fileHandoff(0.1, freshPayee())
        const { pay } = v2Buyer(chain.accounts.buyer.privateKey, chain.tokenAddress, "eip155:8453")
        const buyer = newAgentId()
        const bought = yield* Effect.flatMap(
          TestDesk,
          (desk) =>
            Effect.promise(() =>
              pay(`${desk.url}/api/handoffs/${id}/unlock`, {
                method: "POST",
                headers: { "content-type": "application/json", "x-agent-id": buyer },
                body: JSON.stringify({ payer: buyer })
              }).then((_) => _.status)
            )
        )
        expect(bought).toBe(200)

        const other = newAgentId()
        const header = yield* Effect.promise(() =>
          forger(chain).v2(100_000n, {
            domain: { name: "USDC" },
            accepted: { network: "eip155:8453", extra: { name: "USD Coin", version: "2" } }
          })
        )
        const refused = yield* unlockWith(id, other, { "payment-signature": header })
        expect(refused.json).toMatchObject({ error: "payment_invalid", reason: "invalid_exact_evm_signature" })
      }))
  })
})

/** On a desk that settles through a remote facilitator, which answers: a v1 payment buys, the buyer pays once. */
const buysThroughRemoteFacilitator = Effect.gen(function*() {
  const { balanceOf, chain } = yield* TestChain
  expect((yield* send("/api/status")).json).toMatchObject({ facilitatorKind: "remote", facilitatorReachable: true })
  const { id } = yield* fileHandoff(0.2, freshPayee())
  const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
  const paid = yield* unlockWith(id, newAgentId(), {
    "x-payment": yield* Effect.promise(() => forger(chain).v1(200_000n))
  })
  expect(paid.status).toBe(200)
  expect(paid.json.receipt.mode).toBe("x402")
  expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - 200_000n)
})

describe("x402 with a remote facilitator, and a chain that is not the configured network", () => {
  layer(remoteFacilitatorDesk, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("a remote facilitator verifies and settles; status names it and whether it answers", () =>
      Effect.gen(function*() {
        const facilitator = yield* RemoteFacilitator
        yield* buysThroughRemoteFacilitator
        expect(facilitator.calls()).toBeGreaterThanOrEqual(2)

        // Polled status asks the facilitator at most once every REACHABLE_FRESH_MS, not once a poll.
        const before = facilitator.calls()
        for (let i = 0; i < 20; i++) expect((yield* send("/api/status")).json.facilitatorReachable).toBe(true)
        expect(facilitator.calls() - before).toBeLessThanOrEqual(1)

        // Status says so within REACHABLE_FRESH_MS (and a probe): it answers with the last probe's answer.
        yield* Effect.promise(facilitator.close)
        const started = Date.now()
        const reachable = Effect.map(send("/api/status"), (_) => _.json.facilitatorReachable)
        yield* Effect.repeat(reachable, { until: (up) => up === false, schedule: Schedule.spaced("100 millis") })
        expect(Date.now() - started).toBeLessThan(REACHABLE_FRESH_MS + 2_000)
        expect((yield* send("/api/status")).json).toMatchObject({ facilitatorKind: "remote" })
        // Health's payment-rail check says the same (it said nothing of the rail's reachability).
        const health = yield* send("/api/health")
        expect(health.status).toBe(200)
        expect(health.json.rail).toMatchObject({ facilitatorKind: "remote", facilitatorReachable: false })
      }))

    it.effect("the layer refuses an RPC whose chain id is not DESK_NETWORK's, in one line", () =>
      Effect.gen(function*() {
        const { settings } = yield* TestChain
        const error = yield* Effect.flip(X402.make({ ...settings, network: "base", chainId: 8453 }))
        expect(error.message).toMatch(
          /^DESK_NETWORK=base is chain id 8453, but DESK_CHAIN_RPC_URL \(127\.0\.0\.1:\d+\) is chain id 84532$/
        )
      }))

    it.effect("the layer refuses an asset whose EIP-712 domain is not the configured one, or no contract, in one line", () =>
      Effect.gen(function*() {
        const { settings } = yield* TestChain
        const { address } = settings.asset
        // Started so, the desk would challenge for a domain the token refuses: every buyer's signature, refused.
        const misnamed = yield* Effect.flip(X402.make({ ...settings, asset: { ...settings.asset, name: "USD Coin" } }))
        expect(misnamed.message).toBe(
          `DESK_ASSET_NAME "USD Coin" and DESK_ASSET_VERSION "2" are not the EIP-712 domain of the token ${address} ` +
            `(the token's is name "USDC", version "2"): every payment signed for them would be refused`
        )
        const misversioned = yield* Effect.flip(X402.make({ ...settings, asset: { ...settings.asset, version: "1" } }))
        expect(misversioned.message).toContain(`DESK_ASSET_NAME "USDC" and DESK_ASSET_VERSION "1" are not`)
        const nowhere = "0x000000000000000000000000000000000000dEaD"
        const noContract = yield* Effect.flip(
          X402.make({ ...settings, asset: { ...settings.asset, address: nowhere } })
        )
        expect(noContract.message).toBe(`DESK_ASSET_ADDRESS ${nowhere} is no contract on chain id 84532`)
        // The configured domain starts.
        yield* Effect.scoped(X402.make(settings))
      }))
  })
})

const CREDENTIALS = { token: "hosted-facilitator-token-7f3a", apiKey: "key-91c2" }

class HostedFacilitator extends Context.Tag("HostedFacilitator")<HostedFacilitator, {
  readonly url: string
  readonly calls: () => number
  readonly refused: () => number
}>() {}

class AnonymousDesk extends Context.Tag("AnonymousDesk")<AnonymousDesk, TestDesk["Type"]>() {}

/** The facilitator credentials as an operator sets them, read through the desk's own configuration. */
const credentialsFrom = (env: Record<string, string>) =>
  Either.getOrThrow(withChain({ DESK_FACILITATOR_URL: "https://facilitator.example", ...env })).facilitatorHeaders

const PAYMENT_REQUIRED = { config: { paymentRequired: true, outboxIntervalMs: 3_600_000 } }

/**
 * Two desks on one hosted facilitator that wants a bearer token and an API key on every call: one configured with
 * them (DESK_FACILITATOR_TOKEN, DESK_FACILITATOR_HEADERS), one without.
 */
const hostedDesks = Layer.unwrapScoped(
  Effect.gen(function*() {
    const testChain = yield* chainScoped()
    const facilitator = yield* Effect.acquireRelease(
      Effect.promise(() =>
        startFacilitator(testChain.chain, testChain.chain.accounts.other.privateKey, {
          requireHeaders: { authorization: `Bearer ${CREDENTIALS.token}`, "x-api-key": CREDENTIALS.apiKey }
        })
      ),
      (_) => Effect.promise(_.close)
    )
    const facilitatorHeaders = credentialsFrom({
      DESK_FACILITATOR_TOKEN: CREDENTIALS.token,
      DESK_FACILITATOR_HEADERS: JSON.stringify({ "X-Api-Key": CREDENTIALS.apiKey })
    })
    const settings = { ...testChain.settings, facilitatorUrl: Option.some(facilitator.url), facilitatorHeaders }
    const anonymous = deskOn(
      Pglite.layer({}),
      X402.layer({ ...settings, facilitatorHeaders: credentialsFrom({}) }),
      PAYMENT_REQUIRED
    )
    return Layer.mergeAll(
      deskOn(Pglite.layer({}), X402.layer(settings), PAYMENT_REQUIRED),
      Layer.scoped(AnonymousDesk, Effect.map(Layer.build(anonymous), (context) => Context.get(context, TestDesk))),
      Layer.succeed(TestChain, { ...testChain, settings }),
      Layer.succeed(HostedFacilitator, facilitator)
    ).pipe(Layer.provide(Logger.remove(Logger.defaultLogger)))
  })
)

describe("x402 with a hosted facilitator that wants credentials", () => {
  it("reads DESK_FACILITATOR_TOKEN and DESK_FACILITATOR_HEADERS, flat or per call, and never prints them", () => {
    const flat = credentialsFrom({ DESK_FACILITATOR_TOKEN: "t0k", DESK_FACILITATOR_HEADERS: "{\"X-Api-Key\":\"k\"}" })
    const both = { "X-Api-Key": "k", Authorization: "Bearer t0k" }
    expect(Redacted.value(flat)).toEqual({ verify: both, settle: both, supported: both })
    expect(String(flat)).not.toContain("t0k")
    expect(JSON.stringify(flat)).not.toContain("t0k")
    const perCall = credentialsFrom({
      DESK_FACILITATOR_HEADERS: JSON.stringify({ verify: { "X-Sig": "v" }, settle: { "X-Sig": "s" } })
    })
    expect(Redacted.value(perCall)).toEqual({ verify: { "X-Sig": "v" }, settle: { "X-Sig": "s" }, supported: {} })

    const failure = (env: Record<string, string>) => {
      const result = withChain(env)
      expect(Either.isLeft(result)).toBe(true)
      return String(Either.getLeft(result).pipe(Option.getOrThrow))
    }
    const url = { DESK_FACILITATOR_URL: "https://facilitator.example" }
    expect(failure({ DESK_FACILITATOR_TOKEN: "t0k" })).toContain("set DESK_FACILITATOR_URL")
    expect(failure({ ...url, DESK_FACILITATOR_HEADERS: "[1]" })).toContain("must be a JSON object")
    expect(failure({ ...url, DESK_FACILITATOR_HEADERS: "{\"X-Api-Key\":5}" })).toContain("must be a JSON object")
    const split = failure({ ...url, DESK_FACILITATOR_HEADERS: JSON.stringify({ "X-Api-Key": "secret\r\nHost: x" }) })
    expect(split).toContain("line break")
    expect(split).not.toContain("secret")
    expect(failure({ ...url, DESK_FACILITATOR_HEADERS: "{\"Bad Name\":\"v\"}" })).toContain("invalid header")
    // A token is named as itself, not as the header it becomes (the message said DESK_FACILITATOR_HEADERS).
    const badToken = failure({ ...url, DESK_FACILITATOR_TOKEN: "secret\nHost: x" })
    expect(badToken).toContain("DESK_FACILITATOR_TOKEN holds a line break")
    expect(badToken).not.toContain("DESK_FACILITATOR_HEADERS")
    expect(badToken).not.toContain("secret")
  })

  layer(hostedDesks, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("with its credentials the desk verifies and settles; without them it charges nothing and says so", () =>
      Effect.gen(function*() {
        const { balanceOf, chain } = yield* TestChain
        const facilitator = yield* HostedFacilitator
        yield* buysThroughRemoteFacilitator
        expect(facilitator.refused()).toBe(0)
        const afterPaid = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))

        // The same facilitator, a desk without the credentials: its calls are refused and no USDC moves.
        const anonymous = yield* AnonymousDesk
        const onAnonymous = Effect.provideService(TestDesk, anonymous)
        expect((yield* onAnonymous(send("/api/status"))).json).toMatchObject({
          facilitatorKind: "remote",
          facilitatorReachable: false
        })
        const other = yield* onAnonymous(fileHandoff(0.2, freshPayee()))
        const unpaid = yield* onAnonymous(unlockWith(other.id, newAgentId(), {
          "x-payment": yield* Effect.promise(() => forger(chain).v1(200_000n))
        }))
        expect(unpaid.status).toBe(503)
        expect(unpaid.json).toMatchObject({ ok: false, error: "settlement_unavailable" })
        expect(unpaid.json.message).toContain("refuses this desk's credentials")
        expect(facilitator.refused()).toBeGreaterThanOrEqual(2)
        expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(afterPaid)
      }))
  })
})
