import { Context, Effect, Layer } from "effect"

/**
 * `layer` built with only `tags` of the context around it, which must be every service it requires.
 *
 * What a layer of the HTTP surface is built with stays on every request: the server runs each request on the
 * context its layer was built in, and each API group's handlers run on a merge of the group's own build context
 * with the request's. Effect copies a context on every merge and every service it adds (the router, the API's
 * middleware and the edge add several per request), so every service in them costs on every request: 18 more
 * services around the bench's empty HttpApi endpoint took it from 66-69 to 74-80 us of CPU per request. The
 * desk's server and groups were built among its ~30 services; built with only what each uses, `/llms.txt` went
 * from 85-92 to 79-83 us and `/api/status` from 101-105 to 95-97 us (alternating builds, three rounds).
 * Layers inside `layer` are built on the program's memo map, so they are shared with the rest of the program as
 * before (the API's router among them: a group that registered its routes on a router of its own would serve
 * none).
 */
export const builtWithOnly =
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  <const Tags extends ReadonlyArray<Context.Tag<any, any>>>(...tags: Tags) =>
  <A, E, R extends Context.Tag.Identifier<Tags[number]>>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
    Layer.scopedContext(Effect.gen(function*() {
      const only = Context.pick(...tags)(yield* Effect.context<R>()) as Context.Context<R>
      const memoMap = yield* Layer.CurrentMemoMap
      const scope = yield* Effect.scope
      return yield* Effect.mapInputContext(
        Layer.buildWithMemoMap(layer, memoMap, scope),
        (_: Context.Context<R>) => only
      )
    }))
