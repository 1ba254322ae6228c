import { Config, Effect } from "effect"
import { statfs } from "node:fs/promises"

/**
 * Below this much free space (MB) where the embedded store keeps its data, `/api/health` answers 503: PGlite
 * writes its WAL and tables there, and on a full disk every filing and unlock fails while reads still answer.
 */
export const minFreeDiskConfig = Config.integer("DESK_MIN_FREE_DISK_MB").pipe(
  Config.validate({ message: "DESK_MIN_FREE_DISK_MB must be 0 or more", validation: (n) => n >= 0 }),
  Config.withDefault(64)
)

/** Megabytes free to an unprivileged writer on the file system holding `dir`; none when it cannot be read. */
export const freeMegabytes = (dir: string): Effect.Effect<number | undefined> =>
  Effect.promise(() =>
    statfs(dir).then(
      (stats) => Math.floor((stats.bavail * stats.bsize) / (1024 * 1024)),
      () => undefined
    )
  )
