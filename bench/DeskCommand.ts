import { join } from "node:path"
import { bundleModule, freshBundle, startCommand } from "../scripts/bundle.mjs"

/**
 * How the bench runs the desk: by default with the arguments `npm start` gives node, after building the bundle
 * if it is stale (an operator's restart, which is what the startup figure is about); `tsx` runs the sources
 * through tsx as the tests do. `heapMb` replaces the heap cap; `env` is the environment the desk will run in.
 */
export const deskCommand = async (
  kind: "start" | "tsx",
  heapMb: number | undefined,
  env: Record<string, string | undefined>
): Promise<
  { readonly args: Array<string>; readonly env: Record<string, string>; readonly built: number | undefined }
> => {
  const start = startCommand(env)
  const base = kind === "tsx" ? ["--import", "tsx", "src/main.ts"] : start.args
  const built = kind === "start" ? await freshBundle() : undefined
  const heap = heapMb === undefined ? [] : [`--max-old-space-size=${heapMb}`]
  return {
    args: [...heap, ...base.filter((arg) => heapMb === undefined || !arg.startsWith("--max-old-space-size="))],
    env: kind === "tsx" ? {} : start.env,
    built: built?.built ? built.seconds : undefined
  }
}

/**
 * How the bench runs a reference server (`entry`, a module of bench/) beside the desk: as the desk runs, so that
 * the two are compared on one footing. With `start`, bundled like the desk and given the start script's node
 * arguments and variables for `env` (the desk's environment); with `tsx`, through tsx.
 */
export const referenceCommand = async (
  kind: "start" | "tsx",
  entry: string,
  env: Record<string, string | undefined>
): Promise<{ readonly args: Array<string>; readonly env: Record<string, string> }> => {
  if (kind === "tsx") return { args: ["--import", "tsx", entry], env: {} }
  const { file } = await bundleModule(entry, join(".build", "bench-reference", "main.mjs"))
  const start = startCommand(env)
  const script = start.args.at(-1)
  if (script !== "scripts/start.mjs") throw new Error(`"start" is expected to end with scripts/start.mjs: ${script}`)
  return { args: [...start.args.slice(0, -1), file], env: start.env }
}
