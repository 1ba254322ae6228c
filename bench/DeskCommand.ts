import { freshBundle, startCommand } from "../scripts/bundle.mjs"

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
