import { Data, Deferred, Effect, Schedule } from "effect"
import type { Duration, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startCommand } from "../../scripts/bundle.mjs"

const root = fileURLToPath(new URL("../..", import.meta.url))

export class DeskProcessError extends Data.TaggedError("DeskProcessError")<{ readonly message: string }> {}

export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface DeskProcess {
  readonly url: string
  readonly port: number
  readonly pid: number
  /** The JSON log lines the desk wrote to stdout so far. */
  readonly logs: () => ReadonlyArray<Record<string, unknown>>
  /** Everything written to stdout and stderr so far, for greps. */
  readonly output: () => string
  /** Signals the process and waits for it to exit; a second stop of a stopped desk returns its exit at once. */
  readonly stop: (signal?: "SIGTERM" | "SIGKILL") => Effect.Effect<Exit>
}

export interface DeskProcessOptions {
  /** Only these variables (plus PATH and HOME) reach the desk: no DATABASE_URL or REDIS_URL leaks in from the test run. */
  readonly env?: Record<string, string>
  /** Reuse a port, to restart a desk where its clients expect it. */
  readonly port?: number
  /** PGlite creates its database on first start: 10 to 30 seconds on a busy 2-core machine. */
  readonly startTimeout?: Duration.DurationInput
  /**
   * `tsx` (default): the TypeScript sources, as `npm run dev`; `start`: node with package.json's `start` arguments
   * (the bundle, which that script builds first when it is stale).
   */
  readonly command?: "tsx" | "start"
}

/** A directory for one desk's embedded database, removed with the scope (after the desk is stopped). */
export const tempDataDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "handoff-desk-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** A port the kernel just handed out; released at once, so another process could take it (rarely). */
export const freePort = Effect.async<number, DeskProcessError>((resume) => {
  const server = createServer()
  server.once("error", (error) => resume(Effect.fail(new DeskProcessError({ message: error.message }))))
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const exitOf = (child: ChildProcess) =>
  Effect.async<Exit>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      return resume(Effect.succeed({ code: child.exitCode, signal: child.signalCode }))
    }
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => resume(Effect.succeed({ code, signal }))
    child.once("exit", onExit)
    return Effect.sync(() => child.off("exit", onExit))
  })

const healthy = (url: string) =>
  Effect.tryPromise({
    try: (signal) => fetch(`${url}/api/health`, { signal }).then((response) => response.status === 200),
    catch: () => false
  }).pipe(Effect.timeout("2 seconds"), Effect.orElseSucceed(() => false))

/**
 * A desk process (`node --import tsx src/main.ts`, or as `npm start` runs it) on a loopback port; ready once
 * GET /api/health answers 200. Killed with SIGKILL when the scope closes, if still running.
 */
export const startDesk = (
  options: DeskProcessOptions = {}
): Effect.Effect<DeskProcess, DeskProcessError, Scope.Scope> =>
  Effect.gen(function*() {
    const port = options.port ?? (yield* freePort)
    const command = options.command === "start"
      ? startCommand(options.env ?? {})
      : { env: {}, args: ["--import", "tsx", "src/main.ts"] }
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      HOST: "127.0.0.1",
      PORT: String(port),
      ...command.env,
      ...options.env
    }
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(process.execPath, command.args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })),
      (child) =>
        child.exitCode === null && child.signalCode === null
          ? Effect.zipRight(Effect.sync(() => child.kill("SIGKILL")), exitOf(child))
          : Effect.void
    )
    const chunks: Array<string> = []
    const lines: Array<Record<string, unknown>> = []
    let pending = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      chunks.push(chunk)
      const split = (pending + chunk).split("\n")
      pending = split.pop() ?? ""
      for (const line of split) {
        try {
          lines.push(JSON.parse(line))
        } catch {
          // Not a log line (a stray print): still in output() for greps.
        }
      }
    })
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => chunks.push(chunk))

    const exited = yield* Deferred.make<Exit>()
    yield* Effect.forkScoped(Effect.flatMap(exitOf(child), (exit) => Deferred.succeed(exited, exit)))

    const url = `http://127.0.0.1:${port}`
    const ready = healthy(url).pipe(
      Effect.repeat({ until: (ok) => ok, schedule: Schedule.spaced("100 millis") }),
      Effect.asVoid
    )
    const died = Effect.flatMap(Deferred.await(exited), (exit) =>
      new DeskProcessError({
        message: `the desk exited (${exit.code ?? exit.signal}) before it was ready:\n${chunks.join("")}`
      }))
    yield* Effect.raceFirst(ready, died).pipe(
      Effect.timeoutFail({
        duration: options.startTimeout ?? "120 seconds",
        onTimeout: () => new DeskProcessError({ message: `the desk was not healthy in time:\n${chunks.join("")}` })
      })
    )

    return {
      url,
      port,
      pid: child.pid!,
      logs: () => lines,
      output: () => chunks.join(""),
      stop: (signal = "SIGTERM") =>
        Effect.suspend(() => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal)
          return Deferred.await(exited)
        })
    } satisfies DeskProcess
  })

export interface FailedStart {
  readonly code: number | null
  readonly stderr: string
  readonly ms: number
  /** With `poll`: the status of each answered GET (0: no answer, the connection refused or cut). */
  readonly polled: ReadonlyArray<number>
}

/**
 * Starts the desk from the sources with only `env` (plus PATH, HOME and HOST; DESK_DATA_DIR a fresh directory
 * unless given) and waits for it to exit: for starts that must fail. Killed after 60 seconds (code null).
 */
export const startExpectingExit = async (env: Record<string, string>, options: { readonly poll?: string } = {}) => {
  // A port of its own: desks started side by side (the layer that listens is built before the store) never collide.
  const port = await Effect.runPromise(freePort)
  return new Promise<FailedStart>((resolve) => {
    const dataDir = mkdtempSync(join(tmpdir(), "handoff-desk-"))
    const started = Date.now()
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        HOST: "127.0.0.1",
        PORT: String(port),
        DESK_DATA_DIR: dataDir,
        ...env
      },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    // Requests sent while the desk starts, one at a time, each left waiting as long as the desk leaves it.
    const polled: Array<number> = []
    let exited = false
    const poll = async (path: string) => {
      while (!exited) {
        polled.push(
          await fetch(`http://127.0.0.1:${port}${path}`).then((response) => response.status, () => 0)
        )
        await new Promise((next) => setTimeout(next, 100))
      }
    }
    if (options.poll !== undefined) void poll(options.poll)
    child.on("exit", (code) => {
      exited = true
      clearTimeout(timer)
      rmSync(dataDir, { recursive: true, force: true })
      resolve({ code, stderr, ms: Date.now() - started, polled })
    })
  })
}
