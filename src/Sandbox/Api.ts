import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { SandboxResponse } from "./Responses.ts"

export class SandboxApi extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.get("sandbox", "/api/sandbox")
      .addSuccess(SandboxResponse)
      .annotate(OpenApi.Summary, "The free loop without USDC: status, example, discover, unlock, body")
      .annotate(
        OpenApi.Description,
        "Each call makes a fresh example identity and puts it in the steps. Send each step's method to its url " +
          "(a path on this desk) with its headers and its body as JSON: the last step returns the demo packet's " +
          "body, and the unlock writes a desk receipt of kind demo. Nothing is charged and no USDC moves."
      )
  )
  .annotate(OpenApi.Title, "Sandbox")
{}
