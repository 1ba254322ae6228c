import { describe, expect, it, layer } from "@effect/vitest"
import {
  decodeSignedOffers,
  type EIP712SignedReceipt,
  extractOffersFromPaymentRequired,
  extractReceiptFromResponse,
  findAcceptsObjectFromSignedOffer,
  type JWSSignedReceipt,
  verifyOfferSignatureEIP712,
  verifyReceiptMatchesOffer,
  verifyReceiptSignatureEIP712,
  verifyReceiptSignatureJWS
} from "@x402/extensions/offer-receipt"
import { ConfigProvider, Effect, Either, Layer, Option, Redacted } from "effect"
import { generateKeyPairSync } from "node:crypto"
import * as OfferReceipt from "../../adapters/signing/OfferReceipt.ts"
import { signingKeyConfig } from "../../adapters/signing/OfferReceiptConfig.ts"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { ReceiptSigningLive } from "../../src/Adapters.ts"
import { ReceiptSigning } from "../../src/ReceiptSigning.ts"
import { deskOn, PUBLIC_URL, readJson, TestDesk } from "../support/Desk.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { connectMcp } from "../support/McpClient.ts"
import { backends } from "../support/Storage.ts"
import { decodeHeader, fileHandoff, freshPayee, send, TestChain, unlockWith, x402DeskOn } from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"

const PRICE = 120_000n

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`x402 signed offers and receipts over ${backend.name}`, () => {
    layer(x402DeskOn(backend.layer), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("the 402 carries an offer and the sale a receipt, both signed by the desk wallet (EIP-712)", () =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          const { url } = yield* TestDesk
          const desk = chain.accounts.desk.address
          const status = (yield* send("/api/status")).json
          expect(status.receiptSigner).toEqual({
            kid: `did:pkh:eip155:${chain.chainId}:${desk}`,
            format: "eip712",
            address: desk,
            jwksUrl: null
          })
          const card = yield* Effect.promise(() => fetch(`${url}/.well-known/mcp/server-card.json`).then(readJson))
          expect(card.receiptSigner).toEqual(status.receiptSigner)

          const { id } = yield* fileHandoff(0.12, freshPayee())
          const buyer = newAgentId()
          const challenge = decodeHeader((yield* unlockWith(id, buyer)).headers.get("payment-required"))
          const [offer] = decodeSignedOffers(extractOffersFromPaymentRequired(challenge))
          expect(offer).toMatchObject({ format: "eip712", resourceUrl: `${PUBLIC_URL}/api/handoffs/${id}/unlock` })
          expect((yield* Effect.promise(() => verifyOfferSignatureEIP712(offer!.signedOffer as never))).signer)
            .toBe(desk)
          expect(findAcceptsObjectFromSignedOffer(offer!, challenge.accepts)).toEqual(challenge.accepts[0])

          const paid = yield* Effect.promise(() =>
            forger(chain).v2(PRICE).then((header) =>
              fetch(`${url}/api/handoffs/${id}/unlock`, {
                method: "POST",
                headers: { "content-type": "application/json", "x-agent-id": buyer, "payment-signature": header },
                body: JSON.stringify({ payer: buyer })
              })
            )
          )
          expect(paid.status).toBe(200)
          const fromHeader = extractReceiptFromResponse(paid) as EIP712SignedReceipt
          const verified = yield* Effect.promise(() => verifyReceiptSignatureEIP712(fromHeader))
          expect(verified.signer).toBe(desk)
          expect(verified.payload).toMatchObject({
            payer: chain.accounts.buyer.address,
            resourceUrl: offer!.resourceUrl
          })
          expect(verifyReceiptMatchesOffer(fromHeader, offer!, [chain.accounts.buyer.address])).toBe(true)
          const body = yield* Effect.promise(() => readJson(paid))
          expect(body.signedReceipt.format).toBe("eip712")
          expect((yield* Effect.promise(() => verifyReceiptSignatureEIP712(body.signedReceipt))).signer).toBe(desk)

          // A tampered receipt no longer recovers the desk wallet.
          const tampered = { ...fromHeader, payload: { ...fromHeader.payload, payer: chain.accounts.other.address } }
          const forged = yield* Effect.promise(() =>
            verifyReceiptSignatureEIP712(tampered).then((_) => _.signer, () => "rejected")
          )
          expect(forged).not.toBe(desk)

          // One receipt, with its signature, for its buyer; nobody else learns it exists.
          const receiptId = body.receipt.receiptId
          const own = yield* send(`/api/receipts/${receiptId}`, { agent: buyer })
          expect(own.status).toBe(200)
          expect(own.json.receipt).toEqual(body.receipt)
          expect((yield* Effect.promise(() => verifyReceiptSignatureEIP712(own.json.signedReceipt))).signer).toBe(desk)
          expect((yield* send(`/api/receipts/${receiptId}`, { agent: newAgentId() })).status).toBe(404)
          expect((yield* send(`/api/receipts/${receiptId}`)).status).toBe(401)
        }))

      it.scoped("MCP unlock_handoff carries what REST sends in headers: the v2 challenge and the settlement", () =>
        Effect.gen(function*() {
          // Over MCP an agent had the v1 challenge only: no signed offer, no v2 requirements, no settlement answer.
          const { chain } = yield* TestChain
          const desk = chain.accounts.desk.address
          const { id } = yield* fileHandoff(0.12, freshPayee())
          const buyer = newAgentId()
          const client = yield* connectMcp({ "X-AGENT-ID": buyer })
          const tool = (args: Record<string, unknown>) =>
            Effect.promise(() => client.callTool({ name: "unlock_handoff", arguments: { id, ...args } })).pipe(
              Effect.map((result) => ({
                isError: result.isError === true,
                json: JSON.parse((result.content as Array<{ text: string }>)[0]!.text)
              }))
            )
          const asked = yield* tool({})
          expect(asked.isError).toBe(true)
          expect(asked.json).toMatchObject({ error: "payment_required", x402Version: 1 })
          const challenge = asked.json.paymentRequired
          // REST's header but for the offers' signing time (a second may pass between the two).
          const rest = decodeHeader((yield* unlockWith(id, newAgentId())).headers.get("payment-required"))
          expect({ ...challenge, extensions: undefined }).toEqual({ ...rest, extensions: undefined })
          expect(Object.keys(challenge.extensions).sort()).toEqual(Object.keys(rest.extensions).sort())
          expect(challenge).toMatchObject({ x402Version: 2, accepts: [{ network: `eip155:${chain.chainId}` }] })
          const [offer] = decodeSignedOffers(extractOffersFromPaymentRequired(challenge))
          expect((yield* Effect.promise(() => verifyOfferSignatureEIP712(offer!.signedOffer as never))).signer)
            .toBe(desk)

          const paid = yield* tool({ payment: yield* Effect.promise(() => forger(chain).v2(PRICE)) })
          expect(paid.isError).toBe(false)
          expect(paid.json.paymentResponse).toMatchObject({
            success: true,
            transaction: paid.json.receipt.txHash,
            payer: chain.accounts.buyer.address
          })
          const receipt = paid.json.paymentResponse.extensions["offer-receipt"].info.receipt as EIP712SignedReceipt
          expect((yield* Effect.promise(() => verifyReceiptSignatureEIP712(receipt))).signer).toBe(desk)
          // A repeat unlock without a payment settles nothing: no settlement answer, as over REST.
          const again = yield* tool({})
          expect(again.json).toMatchObject({ alreadyUnlocked: true })
          expect(again.json.paymentResponse).toBeUndefined()
        }))
    })
  })
}

/** A desk without a chain that signs its desk receipts with a configured Ed25519 key (DESK_RECEIPT_SIGNING_KEY). */
const privateJwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" })
const jwsDesk = deskOn(Pglite.layer({}), undefined, { receiptSigning: OfferReceipt.jws(Redacted.make(privateJwk)) })

describe("desk receipts signed by JWS", () => {
  layer(Layer.fresh(jwsDesk), { timeout: 120_000 })((it) => {
    it.effect("a ledger-only sale is signed; the key is published; a tampered receipt fails verification", () =>
      Effect.gen(function*() {
        const status = (yield* send("/api/status")).json
        expect(status.receiptSigner).toMatchObject({ format: "jws", address: null })
        expect(status.receiptSigner.kid).toMatch(/^did:jwk:/)
        const jwks = (yield* send("/.well-known/jwks.json")).json
        expect(jwks.keys).toHaveLength(1)
        expect(jwks.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", kid: status.receiptSigner.kid, alg: "EdDSA" })
        expect(jwks.keys[0]).not.toHaveProperty("d")

        const { id } = yield* fileHandoff(0.5)
        const buyer = newAgentId()
        const unlocked = yield* unlockWith(id, buyer)
        expect(unlocked.status).toBe(200)
        const signed = unlocked.json.signedReceipt as JWSSignedReceipt
        expect(signed.format).toBe("jws")
        // By the key its kid names (did:jwk), and by the published JWKS.
        const payload = yield* Effect.promise(() => verifyReceiptSignatureJWS(signed))
        expect(payload).toMatchObject({
          payer: buyer,
          network: "desk-receipt",
          transaction: unlocked.json.receipt.receiptId,
          resourceUrl: `${PUBLIC_URL}/api/handoffs/${id}/unlock`
        })
        expect(yield* Effect.promise(() => verifyReceiptSignatureJWS(signed, jwks.keys[0]))).toEqual(payload)

        const [header, , signature] = signed.signature.split(".")
        const otherPayer = Buffer.from(JSON.stringify({ ...payload, payer: newAgentId() })).toString("base64url")
        const tampered = { format: "jws" as const, signature: `${header}.${otherPayer}.${signature}` }
        const outcome = yield* Effect.promise(() =>
          verifyReceiptSignatureJWS(tampered).then(() => "verified", () => "rejected")
        )
        expect(outcome).toBe("rejected")
      }))
  })

  it("a desk with neither a wallet nor a signing key signs nothing and says so", () =>
    Effect.runPromise(
      Effect.gen(function*() {
        expect((yield* send("/api/status")).json.receiptSigner).toBeNull()
        expect((yield* send("/.well-known/jwks.json")).json).toEqual({ keys: [] })
        const { id } = yield* fileHandoff(0.5)
        expect((yield* unlockWith(id, newAgentId())).json.signedReceipt).toBeNull()
      }).pipe(Effect.provide(Layer.fresh(deskOn(Pglite.layer({})))), Effect.scoped)
    ))
})

/** DESK_RECEIPT_SIGNING_KEY as an operator sets it, read through the desk's own configuration. */
const signingKeyFrom = (env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(
    signingKeyConfig,
    ConfigProvider.fromMap(new Map(Object.entries(env)))
  )))

describe("DESK_RECEIPT_SIGNING_KEY at startup", () => {
  it("refuses a key whose public half is not its private key's, or one without it, in one line", () => {
    // Published as given, a swapped x made every JWS offer and receipt fail verification against the JWKS.
    const mine = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" })
    const other = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" })
    const swapped = signingKeyFrom({ DESK_RECEIPT_SIGNING_KEY: JSON.stringify({ ...mine, x: other.x }) })
    expect(String(Either.getLeft(swapped).pipe(Option.getOrThrow))).toContain(
      "DESK_RECEIPT_SIGNING_KEY's public half (x, y) is not its private key's (d)"
    )
    const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" })
    const p256Other = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" })
    const swappedY = signingKeyFrom({ DESK_RECEIPT_SIGNING_KEY: JSON.stringify({ ...p256, y: p256Other.y }) })
    expect(Either.isLeft(swappedY)).toBe(true)
    const { x: _x, ...noX } = mine
    const missing = signingKeyFrom({ DESK_RECEIPT_SIGNING_KEY: JSON.stringify(noX) })
    expect(String(Either.getLeft(missing).pipe(Option.getOrThrow))).toContain(
      "DESK_RECEIPT_SIGNING_KEY must be a private JWK"
    )
    for (const good of [mine, p256]) {
      const read = signingKeyFrom({ DESK_RECEIPT_SIGNING_KEY: JSON.stringify(good) })
      expect(Either.isRight(read) && Option.isSome(read.right)).toBe(true)
    }
  })

  it("a signing key set beside a desk wallet signs: the operator's choice is not dropped", () =>
    Effect.runPromise(
      Effect.gen(function*() {
        const signing = yield* ReceiptSigning
        expect(Option.map(signing.key, (_) => _.format)).toEqual(Option.some("jws"))
      }).pipe(
        Effect.provide(ReceiptSigningLive),
        Effect.withConfigProvider(ConfigProvider.fromMap(
          new Map([
            ["DESK_RECEIPT_SIGNING_KEY", JSON.stringify(privateJwk)],
            ["DESK_WALLET_PRIVATE_KEY", `0x${"11".repeat(32)}`]
          ])
        ))
      )
    ))
})
