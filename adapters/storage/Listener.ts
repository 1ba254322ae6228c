import { SqlError } from "@effect/sql/SqlError"
import { Effect, Stream } from "effect"
import pg from "pg"

/**
 * LISTEN on `channel` over a connection of its own, made with `config`. @effect/sql-pg's own `listen` shares one
 * connection between its streams and ends a stream with an UNLISTEN on it: over a silent link (a partition, a
 * NAT that dropped the connection) that UNLISTEN was never answered, so the preview cache, restarting a listener
 * that no longer heard, waited on it until TCP gave up, minutes to hours, with nothing cached meanwhile; and the
 * shared connection, still held, would have been handed to the new listener anyway. Here the stream fails when
 * its connection breaks, and ending it destroys the connection's socket: the server drops a closed session's
 * LISTEN by itself.
 */
export const listenOn = (config: pg.ClientConfig) => (channel: string): Stream.Stream<string, SqlError> =>
  Stream.asyncPush<string, SqlError>((emit) =>
    Effect.gen(function*() {
      const client = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const client = new pg.Client(config)
            client.on("error", (cause) => emit.fail(new SqlError({ cause, message: "Listen connection error" })))
            client.on("end", () => emit.fail(new SqlError({ message: "Listen connection closed" })))
            await client.connect().catch((cause: unknown) => {
              client.connection.stream.destroy()
              throw cause
            })
            return client
          },
          catch: (cause) => new SqlError({ cause, message: "Failed to acquire connection for listen" })
        }),
        (client) => Effect.sync(() => client.connection.stream.destroy())
      )
      client.on("notification", (message) => {
        if (message.channel === channel && message.payload !== undefined) emit.single(message.payload)
      })
      yield* Effect.tryPromise({
        try: () => client.query(`LISTEN ${client.escapeIdentifier(channel)}`),
        catch: (cause) => new SqlError({ cause, message: "Failed to listen" })
      })
    })
  )
