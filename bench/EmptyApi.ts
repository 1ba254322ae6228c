import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { makeServer } from "../src/Http/NodeServer.ts"

/**
 * The stack's ceiling: one HttpApi endpoint that does nothing, on the desk's Effect and platform versions and
 * its Node server (same timeouts, same held-request wrapper), with tracing off as the desk runs it.
 */
class Reference extends HttpApiGroup.make("reference").add(
  HttpApiEndpoint.get("empty", "/").addSuccess(Schema.Struct({ ok: Schema.Literal(true) }))
) {}

class EmptyApi extends HttpApi.make("empty").add(Reference) {}

const ReferenceLive = HttpApiBuilder.group(
  EmptyApi,
  "reference",
  (handlers) => handlers.handle("empty", () => Effect.succeed({ ok: true as const }))
)

HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(EmptyApi).pipe(Layer.provide(ReferenceLive))),
  Layer.provide(
    NodeHttpServer.layer(() => makeServer({ requestSeconds: 30 }), {
      port: Number(process.env.PORT),
      host: process.env.HOST ?? "127.0.0.1"
    })
  ),
  Layer.provide(Layer.setTracerEnabled(false)),
  Layer.launch,
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
