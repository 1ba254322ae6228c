import { bazaarResourceServerExtension, declareDiscoveryExtension } from "@x402/extensions/bazaar"

// The Bazaar discovery extension (x402's catalog of paid resources): how to call an unlock and what it answers, so
// a facilitator's catalog can index every handoff as a paid resource. One declaration serves every handoff; what a
// handoff is (its title and teaser) is the requirement's own `description`.

const AGENT_ID = "did:desk:0123456789abcdef0123456789abcdef"

const AGENT_HEADER = {
  "X-AGENT-ID": `Your desk id (did:desk: + 32 lowercase hex), the same as the body's payer; e.g. ${AGENT_ID}`
}

const RECEIPT_EXAMPLE = {
  receiptId: "R-1",
  handoffId: "DESK-1",
  title: "The handoff's title",
  payer: AGENT_ID,
  filerDid: "did:desk:fedcba9876543210fedcba9876543210",
  priceUsd: 0.25,
  filerPayoutUsd: 0.225,
  deskFeeUsd: 0.025,
  mode: "x402",
  kind: "sale",
  filerPayoutStatus: "pending",
  filerPayoutTxHash: null,
  filerPayoutTxUrl: null,
  txHash: `0x${"ab".repeat(32)}`,
  txUrl: null,
  network: "base",
  at: "2026-01-01T00:00:00.000Z"
}

const UNLOCK_OUTPUT = {
  example: { ok: true, alreadyUnlocked: false, receipt: RECEIPT_EXAMPLE, bodyUrl: "/api/handoffs/DESK-1/body" },
  schema: {
    properties: {
      ok: { type: "boolean", const: true },
      alreadyUnlocked: { type: "boolean" },
      receipt: {
        type: "object",
        properties: {
          receiptId: { type: "string" },
          handoffId: { type: "string" },
          txHash: { type: ["string", "null"] }
        },
        required: ["receiptId", "handoffId"]
      },
      bodyUrl: {
        type: "string",
        description:
          "GET it with the same X-AGENT-ID: { ok, id, title, hash, body } where body is the sealed Markdown " +
          "($defs.body)"
      }
    },
    required: ["ok", "alreadyUnlocked", "receipt", "bodyUrl"],
    // What the unlock buys: the answer of GET bodyUrl, declared beside the unlock's own answer.
    $defs: {
      body: {
        type: "object",
        description: "The answer of GET bodyUrl with the same X-AGENT-ID",
        properties: {
          ok: { type: "boolean", const: true },
          id: { type: "string", description: "The handoff id, DESK-<n>" },
          title: { type: "string" },
          hash: { type: "string", description: "SHA-256 (hex) of body, as the preview's hash" },
          body: { type: "string", description: "The sealed Markdown body" }
        },
        required: ["ok", "id", "title", "hash", "body"]
      }
    }
  }
}

/** The declaration as x402's own server extension completes it for `POST <resource>`, plus the identity header. */
const declare = () => {
  const declared = declareDiscoveryExtension({
    bodyType: "json",
    input: { payer: AGENT_ID },
    inputSchema: {
      properties: { payer: { type: "string", pattern: "^did:desk:[0-9a-f]{32}$", description: "Your desk id" } },
      required: ["payer"],
      additionalProperties: false
    },
    output: UNLOCK_OUTPUT
  })
  const enriched = bazaarResourceServerExtension.enrichDeclaration!(declared["bazaar"], {
    method: "POST",
    adapter: { getPath: () => "/api/handoffs/DESK-1/unlock" }
  }) as {
    info: { input: Record<string, unknown> }
    schema: { properties: { input: { properties: Record<string, unknown> } } }
  }
  return {
    ...enriched,
    info: { ...enriched.info, input: { ...enriched.info.input, headers: AGENT_HEADER } },
    schema: {
      ...enriched.schema,
      properties: {
        ...enriched.schema.properties,
        input: {
          ...enriched.schema.properties.input,
          properties: {
            ...enriched.schema.properties.input.properties,
            headers: { type: "object", additionalProperties: { type: "string" } }
          }
        }
      }
    }
  }
}

/** x402 v2: the challenge's `extensions`. */
export const UNLOCK_DISCOVERY: Readonly<Record<string, unknown>> = { bazaar: declare() }

/** x402 v1: the same declaration in the requirement's `outputSchema`, the form v1 catalogs read. */
export const UNLOCK_OUTPUT_SCHEMA_V1: Readonly<Record<string, unknown>> = {
  input: {
    type: "http",
    method: "POST",
    discoverable: true,
    bodyType: "json",
    bodyFields: { payer: { type: "string", required: true, description: "Your desk id, the same as X-AGENT-ID" } },
    headerFields: AGENT_HEADER
  },
  output: UNLOCK_OUTPUT.example
}
