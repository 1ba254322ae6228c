import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync
} from "node:fs"
import { dirname, join, resolve } from "node:path"
import { StartupError } from "../../src/Domain/StartupError.ts"

const LOCK_FILE = "desk.lock"

interface Owner {
  readonly pid: number
  /** The process's start time on Linux (clock ticks after boot), so a reused pid is not taken for the owner. */
  readonly started: string | null
}

/** Fields 3 on of /proc/<pid>/stat (state first), counted after the command name, which may hold spaces and `)`. */
const statOf = (pid: number): ReadonlyArray<string> | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return null
  }
}

/** Field 22 of /proc/<pid>/stat: the start time. */
const startedOf = (pid: number): string | null => statOf(pid)?.[19] ?? null

/**
 * A zombie (killed, not yet reaped by its parent: a desk killed with its shell waits for init) has exited and
 * holds no file, yet still answers kill(pid, 0) with its start time: it must not keep its directory.
 */
const exited = (pid: number): boolean => {
  const state = statOf(pid)?.[0]
  return state === "Z" || state === "X"
}

const ours: Owner = { pid: process.pid, started: startedOf(process.pid) }

const isAlive = (owner: Owner): boolean => {
  // Our own pid: this very process (a second open of the directory), or an earlier one whose pid we were given
  // again (a restarted container's desk is pid 1 again), told apart by the start time.
  if (owner.pid === process.pid) return owner.started !== null && owner.started === ours.started
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    // EPERM: a process of another user has that pid.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  if (exited(owner.pid)) return false
  const started = startedOf(owner.pid)
  return owner.started === null || started === null || started === owner.started
}

const readOwner = (path: string): Owner | undefined => {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8"))
    return typeof parsed?.pid === "number"
      ? { pid: parsed.pid, started: typeof parsed.started === "string" ? parsed.started : null }
      : undefined
  } catch {
    return undefined
  }
}

/**
 * Creates the lock file if no file has that name: true when this process now holds the directory. The file
 * appears with its owner already in it (written under a name of its own, then linked, which fails if the name is
 * taken): created empty and written after, a desk starting at the same moment read no owner, took the lock for
 * a stale one and took it over, and both desks held the directory (5 in 1,000 simultaneous starts).
 */
const create = (path: string): boolean => {
  const draft = `${path}.${process.pid}-${randomUUID()}`
  const fd = openSync(draft, "wx")
  try {
    writeSync(fd, JSON.stringify(ours))
  } finally {
    closeSync(fd)
  }
  try {
    linkSync(draft, path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  } finally {
    unlinkSync(draft)
  }
}

const inUse = (dir: string, owner: Owner | undefined) =>
  new StartupError({
    message:
      `DESK_DATA_DIR ${dir} is in use by another desk (pid ${owner?.pid ?? "unknown"}); stop it, or give this desk ` +
      "another DESK_DATA_DIR (two desks on one embedded database lose each other's writes)."
  })

/**
 * Takes `dir` for this process, or says who holds it. A lock left by a process that is gone (killed with
 * SIGKILL, or a reused pid) is taken over: it is first renamed away, and only a lock whose owner is still dead
 * once it is out of the way is dropped, so two desks that find the same stale lock cannot both take over.
 */
const acquire = (dir: string): void => {
  const path = join(dir, LOCK_FILE)
  for (let attempt = 0; attempt < 5; attempt++) {
    if (create(path)) return
    const owner = readOwner(path)
    if (owner !== undefined && isAlive(owner)) throw inUse(dir, owner)
    const aside = `${path}.stale-${process.pid}-${Date.now()}`
    try {
      renameSync(path, aside)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue
      throw error
    }
    const taken = readOwner(aside)
    if (taken !== undefined && isAlive(taken)) {
      // Another desk took over between our look and the rename: give its lock back.
      try {
        linkSync(aside, path)
      } finally {
        unlinkSync(aside)
      }
      throw inUse(dir, taken)
    }
    unlinkSync(aside)
  }
  throw inUse(dir, readOwner(path))
}

/** A lock's draft (`desk.lock.<pid>-<uuid>`) or a stale lock renamed aside (`desk.lock.stale-<pid>-<ms>`). */
const LEFT_BEHIND = /^desk\.lock\.(?:stale-)?(\d+)-/

/**
 * Drops what a desk killed between two steps of `create` or `acquire` left in the directory: a draft it had not yet
 * unlinked, a stale lock it had renamed aside. Run by the holder, so no desk is taking the lock meanwhile; a file of
 * a process still alive (one that is failing to take the lock right now) is left to it. A draft names its owner
 * with its start time, so a reused pid does not keep it.
 */
const sweepLeftBehind = (dir: string) => {
  for (const name of readdirSync(dir)) {
    const pid = LEFT_BEHIND.exec(name)?.[1]
    if (pid === undefined) continue
    const path = join(dir, name)
    const named = name.startsWith(`${LOCK_FILE}.stale-`) ? undefined : readOwner(path)
    const owner = named?.pid === Number(pid) ? named : { pid: Number(pid), started: null }
    if (owner.pid === process.pid || isAlive(owner)) continue
    try {
      unlinkSync(path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
    }
  }
}

const release = (dir: string) => {
  const path = join(dir, LOCK_FILE)
  if (readOwner(path)?.pid === process.pid) unlinkSync(path)
}

const notADirectory = (dir: string, error: unknown) =>
  new StartupError({
    message: `DESK_DATA_DIR ${dir} cannot be used as the embedded database's directory: ` +
      ((error as NodeJS.ErrnoException).code === "EEXIST" || (error as NodeJS.ErrnoException).code === "ENOTDIR"
        ? "it (or a parent) is a file, not a directory"
        : (error as Error).message)
  })

/**
 * `mkdir -p`, one level at a time. Node's recursive mkdirSync never returns for a path such as /proc/x (it tries
 * again for as long as the directory cannot be made and its parent exists), synchronously: the desk spun a core,
 * said nothing and could not even be stopped by SIGTERM.
 */
const makeDirectory = (dir: string, parentMade = false): void => {
  try {
    mkdirSync(dir)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // Made meanwhile by another desk starting on the same directory: there it is.
    if (code === "EEXIST") return
    if (code !== "ENOENT" || parentMade || dirname(dir) === dir) throw error
    makeDirectory(dirname(dir))
    makeDirectory(dir, true)
  }
}

/** One desk per embedded data directory, for the scope's lifetime: the directory is created if missing. */
export const holdDataDir = (dataDir: string) => {
  const dir = resolve(dataDir)
  return Effect.acquireRelease(
    Effect.try({
      try: () => {
        makeDirectory(dir)
        if (!statSync(dir).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" })
        return dir
      },
      catch: (error) => notADirectory(dir, error)
    }).pipe(
      Effect.flatMap((dir) =>
        Effect.try({
          try: () => {
            acquire(dir)
            sweepLeftBehind(dir)
          },
          catch: (error) => (error instanceof StartupError ? error : notADirectory(dir, error))
        })
      )
    ),
    () => Effect.sync(() => release(dir))
  )
}
