import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(
        () => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port")))
      )
    })
  })

const statusField = (pid: number, field: "VmRSS" | "VmHWM") => {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}

const TICKS_PER_SECOND = 100

/** The process and its descendants (DESK_WORKERS forks workers): Linux /proc; the process alone elsewhere. */
const treeOf = (pid: number): Array<number> => {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)
    return [pid, ...children.filter((_) => _ !== "").flatMap((child) => treeOf(Number(child)))]
  } catch {
    return [pid]
  }
}

const sum = (pid: number, f: (pid: number) => number) => treeOf(pid).reduce((total, one) => total + f(one), 0)

/** CPU time (user + system) the process has used so far, in ms (Linux /proc; 0 elsewhere). */
const cpuMs = (pid: number) => {
  try {
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th of the whole line.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

/**
 * The process's main thread so far, in ms: on a CPU, and runnable but waiting for one (Linux
 * /proc/<pid>/task/<pid>/schedstat; none elsewhere, or where the kernel keeps no such figures). The desk's
 * JavaScript runs on that one thread.
 */
export const mainThreadMs = (pid: number): MainThread | undefined => {
  try {
    const [onCpu, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ").map(Number)
    return Number.isFinite(onCpu) && Number.isFinite(waiting)
      ? { onCpuMs: onCpu! / 1e6, waitingMs: waiting! / 1e6 }
      : undefined
  } catch {
    return undefined
  }
}

export interface MainThread {
  readonly onCpuMs: number
  readonly waitingMs: number
}

/** CPU time of every core together, in ticks: all of it and the idle part. */
export interface MachineTicks {
  readonly total: number
  readonly idle: number
}

/** The machine's CPU time so far (Linux /proc/stat; zeros elsewhere, which report nothing). */
export const machineTicks = (): MachineTicks => {
  try {
    // cpu user nice system idle iowait irq softirq steal: guest time is counted in user already. A core waiting
    // for the disk (iowait) has nothing to run either: idle.
    const ticks = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
    return { total: ticks.reduce((a, b) => a + b, 0), idle: ticks[3]! + ticks[4]! }
  } catch {
    return { total: 0, idle: 0 }
  }
}

/** A server process of the benchmark: started, polled until it answers, its memory sampled, stopped. */
export interface Server {
  readonly url: string
  readonly pid: number
  /** ms from spawn to the first successful answer on the ready path. */
  readonly startupMs: number
  /** Highest RSS since the last call, in bytes, of the process and its children (Linux /proc; 0 elsewhere). */
  readonly takePeakRss: () => number
  /** CPU time used so far by the process and its children, in ms. */
  readonly cpuMs: () => number
  /** The process's own main thread so far (a supervisor's, when it forks workers). */
  readonly mainThread: () => MainThread | undefined
  readonly stop: () => Promise<void>
}

export const startServer = async (options: {
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly readyPath: string
  readonly port: number
  readonly timeoutMs?: number
}): Promise<Server> => {
  const started = performance.now()
  const child: ChildProcess = spawn(process.execPath, [...options.args], {
    env: { ...process.env, ...options.env, PORT: String(options.port), HOST: "127.0.0.1" },
    // The desk's logs are part of its work on the request path, so they are written, just not kept.
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000)
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const url = `http://127.0.0.1:${options.port}`
  const deadline = started + (options.timeoutMs ?? 120_000)
  let ready = false
  while (!ready) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} before answering: ${stderr}`)
    if (performance.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`server did not answer ${options.readyPath} in time: ${stderr}`)
    }
    // A poll that reaches the desk while its API is still being built waits for it (held by the server).
    ready = await fetch(`${url}${options.readyPath}`, { signal: AbortSignal.timeout(10_000) })
      .then((response) => response.ok, () => false)
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const startupMs = performance.now() - started
  const pid = child.pid!
  const rss = () => sum(pid, (one) => statusField(one, "VmRSS"))
  let peak = rss()
  const sampler = setInterval(() => {
    peak = Math.max(peak, rss())
  }, 50)
  return {
    url,
    pid,
    startupMs,
    takePeakRss: () => {
      const value = Math.max(peak, rss())
      peak = rss()
      return value
    },
    cpuMs: () => sum(pid, cpuMs),
    mainThread: () => mainThreadMs(pid),
    stop: async () => {
      clearInterval(sampler)
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
      await exited
      clearTimeout(timer)
    }
  }
}
