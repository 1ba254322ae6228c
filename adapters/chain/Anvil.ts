import { spawn } from "node:child_process"
import { createRequire } from "node:module"

export interface AnvilOptions {
  readonly port: number
  readonly chainId: number
  readonly mnemonic: string
}

export interface AnvilProcess {
  readonly rpcUrl: string
  readonly stop: () => Promise<void>
}

const readyTimeoutMs = 15_000
const stopTimeoutMs = 5_000

// The shell runs anvil and kills it on EOF from our stdin pipe, which closes when stop() runs or
// when this process dies in any way (even SIGKILL), so anvil can never be orphaned. stdin goes
// through fd 3 because sh hands background jobs /dev/null as their stdin.
const watchdog = `exec 3<&0
"$0" "$@" </dev/null & anvil=$!
{ cat <&3 >/dev/null; kill $anvil 2>/dev/null; } &
wait $anvil`

const anvilCommand = (): ReadonlyArray<string> => {
  const arch = process.arch === "x64" ? "amd64" : process.arch
  try {
    return [createRequire(import.meta.url).resolve(`@foundry-rs/anvil-${process.platform}-${arch}/bin/anvil`)]
  } catch {
    return ["npx", "--no", "anvil"]
  }
}

export const spawnAnvil = async (options: AnvilOptions): Promise<AnvilProcess> => {
  const args = [
    ...anvilCommand(),
    "--host",
    "127.0.0.1",
    "--port",
    String(options.port),
    "--chain-id",
    String(options.chainId),
    "--mnemonic",
    options.mnemonic
  ]
  // detached: a Ctrl-C in the terminal reaches only us, and we shut anvil down in order.
  const child = spawn("sh", ["-c", watchdog, ...args], { stdio: ["pipe", "pipe", "pipe"], detached: true })
  let output = ""
  const keepTail = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-4_000)
  }
  // Anvil logs every RPC call; the pipes must keep draining or it blocks on a full buffer.
  child.stdout.on("data", keepTail)
  child.stderr.on("data", keepTail)

  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    child.once("error", (error) => {
      keepTail(Buffer.from(String(error)))
      resolve()
    })
  })
  // Releases the watchdog's reader when anvil stopped on its own (a taken port, a crash).
  void exited.then(() => child.stdin.destroy())
  child.stdin.on("error", () => {})
  let stopped: Promise<void> | undefined
  const stop = () => {
    stopped ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.stdin.end()
      const timer = setTimeout(() => killGroup(child.pid), stopTimeoutMs)
      await exited
      clearTimeout(timer)
    })()
    return stopped
  }

  try {
    const port = await listeningPort(child.stdout, exited, () => output)
    return { rpcUrl: `http://127.0.0.1:${port}`, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

const listeningPort = (
  stdout: NodeJS.ReadableStream,
  exited: Promise<void>,
  output: () => string
): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(`anvil did not start within ${readyTimeoutMs} ms`), readyTimeoutMs)
    const onData = () => {
      const match = /Listening on [\d.]+:(\d+)\s/.exec(output())
      if (match?.[1] === undefined) return
      cleanup()
      resolve(Number(match[1]))
    }
    const fail = (reason: string) => {
      cleanup()
      reject(new Error(`${reason}\n${output()}`))
    }
    const cleanup = () => {
      clearTimeout(timer)
      stdout.off("data", onData)
    }
    // Registered after keepTail, so output() already holds this chunk.
    stdout.on("data", onData)
    void exited.then(() => fail("anvil exited before listening"))
  })

const killGroup = (pid: number | undefined) => {
  if (pid === undefined) return
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // already gone
  }
}
