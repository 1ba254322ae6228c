import { existsSync, readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { dirname, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

/** The parts of a V8 `.cpuprofile` (as `node --cpu-prof` writes it) that the summary reads. */
interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
}
export interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
}

/** A place and its share of the thread's busy samples (0-1). */
export interface Share {
  readonly where: string
  readonly share: number
}

export interface ProfileSummary {
  /** Samples in which the thread ran (not idle). */
  readonly busySamples: number
  /** Self time by package (`effect`, `@effect/platform`, `pg`), by project file (`src/Http/Edge.ts`), by Node's own
   * module (`node:_http_outgoing`) or by native function (`writev`, `(garbage collector)`); most first. */
  readonly bySource: ReadonlyArray<Share>
  /** Self time by function, named with its source file and line; most first. */
  readonly byFunction: ReadonlyArray<Share>
}

interface Place {
  /** Its package, project file, Node module or native function. */
  readonly source: string
  /** Its file and line, for code (within its package: `effect/src/internal/core.ts:519`). */
  readonly at: string | undefined
}

const packageOf = (path: string) => {
  const [first, second] = path.split("/")
  return first!.startsWith("@") ? `${first}/${second}` : first!
}

/**
 * Where a frame's code came from: through the source map beside its file (`<file>.map`, as scripts/bundle.mjs
 * writes it beside the desk's bundle) to the original file, named from the project root (`src/...`) or as its
 * package (`effect`); Node's own modules by their `node:` name; native code by its function name.
 */
const placer = (root: string) => {
  const maps = new Map<string, SourceMap | undefined>()
  const mapOf = (file: string) => {
    if (!maps.has(file)) {
      const mapFile = `${file}.map`
      maps.set(file, existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, "utf8"))) : undefined)
    }
    return maps.get(file)
  }
  const inFile = (path: string, line: number): Place => {
    const inProject = relative(root, path)
    const modules = inProject.lastIndexOf("node_modules/")
    const inPackage = modules >= 0 ? inProject.slice(modules + "node_modules/".length) : undefined
    return {
      source: inPackage === undefined ? inProject : packageOf(inPackage),
      at: `${inPackage ?? inProject}:${line + 1}`
    }
  }
  return ({ columnNumber, functionName, lineNumber, url }: CallFrame): Place => {
    if (url === "") return { source: functionName, at: undefined }
    if (!url.startsWith("file://")) return { source: url, at: `${url}:${lineNumber + 1}` }
    const file = fileURLToPath(url)
    const entry = mapOf(file)?.findEntry(lineNumber, columnNumber)
    return entry === undefined || !("originalSource" in entry)
      ? inFile(file, lineNumber)
      : inFile(resolve(dirname(file), entry.originalSource), entry.originalLine)
  }
}

const ranked = (counts: Map<string, number>, busy: number, most: number): ReadonlyArray<Share> =>
  [...counts].sort((a, b) => b[1] - a[1]).slice(0, most).map(([where, samples]) => ({
    where,
    share: samples / busy
  }))

/**
 * Where one thread's CPU went in `profile`: its busy samples' self time by source and by function, the `most`
 * largest of each. Frames of a bundle are traced back through its source map, so the desk's bundle (4.4 MB on a
 * few long lines) is read as the files it was built from.
 */
export const summarizeProfile = (profile: CpuProfile, root: string, most = 12): ProfileSummary => {
  const place = placer(root)
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const samplesOf = new Map<number, number>()
  for (const id of profile.samples) samplesOf.set(id, (samplesOf.get(id) ?? 0) + 1)
  const bySource = new Map<string, number>()
  const byFunction = new Map<string, number>()
  let busy = 0
  for (const [id, samples] of samplesOf) {
    const frame = nodes.get(id)!.callFrame
    if (frame.url === "" && frame.functionName === "(idle)") continue
    busy += samples
    const { at, source } = place(frame)
    bySource.set(source, (bySource.get(source) ?? 0) + samples)
    const name = at === undefined ? source : `${frame.functionName || "(anonymous)"} ${at}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + samples)
  }
  return { busySamples: busy, bySource: ranked(bySource, busy, most), byFunction: ranked(byFunction, busy, most) }
}

export const readProfile = (file: string): CpuProfile => JSON.parse(readFileSync(file, "utf8"))

const shares = (list: ReadonlyArray<Share>) =>
  list.map(({ share, where }) => `${(share * 100).toFixed(1)} % ${where}`).join(", ")

/** The summary in a few lines, for the bench's report. */
export const profileLines = (file: string, summary: ProfileSummary): Array<string> => [
  `profile: ${file}, ${summary.busySamples} busy samples`,
  `  by source: ${shares(summary.bySource)}`,
  `  by function (self): ${shares(summary.byFunction)}`
]
