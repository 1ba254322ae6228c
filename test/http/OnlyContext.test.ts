import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { createServer } from "node:http"
import { builtWithOnly } from "../../src/Http/OnlyContext.ts"
import { servedOnPlatformAlone } from "../../src/Http/Server.ts"

/** A service the probe's group uses, and one around the server that nothing on the request path uses. */
class Used extends Context.Tag("Used")<Used, string>() {}
class Unused extends Context.Tag("Unused")<Unused, string>() {}

class Probe extends HttpApiGroup.make("probe").add(
  HttpApiEndpoint.get("probe", "/").addSuccess(
    Schema.Struct({ used: Schema.String, unused: Schema.NullOr(Schema.String), services: Schema.Number })
  )
) {}
class ProbeApi extends HttpApi.make("probe").add(Probe) {}

/** What a request's handler finds in its context. */
const ProbeLive = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  Effect.gen(function*() {
    const used = yield* Used
    return handlers.handle("probe", () =>
      Effect.gen(function*() {
        const context = yield* Effect.context<never>()
        const unused = yield* Effect.serviceOption(Unused)
        return { used, unused: Option.getOrNull(unused), services: context.unsafeMap.size }
      }))
  }))

/** The probe served on a loopback port, its group and server each built as `narrow` says (the server as the desk's). */
const probed = (narrow: { readonly group: boolean; readonly server: boolean }) =>
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    const port = address._tag === "TcpAddress" ? address.port : 0
    const response = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/`))
    return (yield* Effect.promise(() => response.json())) as { used: string; unused: string | null; services: number }
  }).pipe(
    Effect.provide(
      HttpApiBuilder.serve().pipe(
        (served) => narrow.server ? served.pipe(servedOnPlatformAlone) : served,
        Layer.provide(
          HttpApiBuilder.api(ProbeApi).pipe(
            Layer.provide(narrow.group ? ProbeLive.pipe(builtWithOnly(Used)) : ProbeLive)
          )
        ),
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provide(Layer.succeed(Used, "used")),
        Layer.provide(Layer.succeed(Unused, "unused"))
      )
    )
  )

describe("builtWithOnly", () => {
  it.effect("keeps a service nothing uses off the requests of a narrowed server and group", () =>
    Effect.gen(function*() {
      const plain = yield* probed({ group: false, server: false })
      const groupOnly = yield* probed({ group: true, server: false })
      const narrowed = yield* probed({ group: true, server: true })
      expect(plain).toMatchObject({ used: "used", unused: "unused" })
      // The request's own context still brings whatever its server was built with.
      expect(groupOnly).toMatchObject({ used: "used", unused: "unused" })
      expect(narrowed).toMatchObject({ used: "used", unused: null })
      expect(narrowed.services).toBeLessThan(plain.services)
    }))

  it.effect("builds a layer inside once, shared with the rest of the program", () =>
    Effect.gen(function*() {
      let builds = 0
      const Shared = Layer.effect(Used, Effect.sync(() => `build ${++builds}`))
      const inside = Layer.effectDiscard(Used).pipe(Layer.provide(Shared), builtWithOnly())
      const program = Effect.map(Used, (used) => ({ used, builds }))
      const result = yield* program.pipe(Effect.provide(Layer.merge(inside, Shared)))
      expect(result).toEqual({ used: "build 1", builds: 1 })
    }))

  it.effect("builds the layer with only the services named", () =>
    Effect.gen(function*() {
      let services: Array<string> = []
      const capture = Layer.effectDiscard(
        Effect.map(Effect.context<never>(), (context) => {
          services = [...context.unsafeMap.keys()]
        })
      )
      yield* Layer.build(capture.pipe(builtWithOnly(Used))).pipe(
        Effect.scoped,
        Effect.provide(Layer.merge(Layer.succeed(Used, "used"), Layer.succeed(Unused, "unused")))
      )
      expect(services).toContain("Used")
      expect(services).not.toContain("Unused")
    }))
})
