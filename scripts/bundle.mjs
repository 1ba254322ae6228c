// The desk as one ES module, built by esbuild (the compiler tsx uses) and rebuilt only when a source changed.
// Plain JavaScript, so `npm start` needs no TypeScript loader: under tsx the desk idles at about 300 MB of
// RSS and starts in 3-4 s; as this bundle, about 140 MB and under a second.
import { build } from "esbuild"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/**
 * Two directories below the project root, like src/<dir>/, so the desk's paths relative to its own modules
 * (`../../static/`) resolve the same from the bundle.
 */
export const BUNDLE = join(root, ".build", "desk", "main.mjs")

// This file too: a change to how the bundle is built (its options) makes every existing bundle stale.
const SOURCES = ["src", "adapters", "scripts/bundle.mjs", "package-lock.json", "package.json", "tsconfig.json"]

const newestIn = (path) => {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (stat === undefined) return 0
  if (!stat.isDirectory()) return stat.mtimeMs
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestIn(join(path, name))), stat.mtimeMs)
}

/** True when the bundle is older than any file it is built from. */
export const isStale = (file = BUNDLE) => {
  const built = statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0
  return SOURCES.some((source) => newestIn(join(root, source)) > built)
}

/** Builds the bundle into `file`; `seconds` is how long esbuild took. */
export const bundleDesk = (file = BUNDLE) =>
  bundleInto(file, {
    [basename(file, ".mjs")]: join(root, "src", "main.ts"),
    // The embedded database runs on a thread of its own, from a bundle beside the desk's.
    "pglite-worker": join(root, "adapters", "storage", "PgliteWorker.ts")
  })

/**
 * `entry` (a path from the project root) bundled into `file` as the desk is: the bench runs its reference servers
 * so when it runs the desk so, since the same server under tsx cost 10-25 % more CPU per request.
 */
export const bundleModule = (entry, file) => bundleInto(file, { [basename(file, ".mjs")]: join(root, entry) })

/** `entryPoints` (output name to absolute source path) bundled beside `file` as the desk is. */
export const bundleInto = async (file, entryPoints) => {
  const started = performance.now()
  await build({
    entryPoints,
    outdir: dirname(file),
    define: { __DESK_PGLITE_WORKER__: JSON.stringify("./pglite-worker.mjs") },
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Without comments and indentation the bundle is 4.4 MB, not 6.1, and ASCII: a comment's curly quote made V8
    // hold the whole source as two-byte text, 12 MB of heap for as long as the desk runs; now 4.4 MB. Names stay,
    // so stack traces still name their functions (at a column of a long line). License comments go to a file
    // beside the bundle, where their authors' names cannot turn the source two-byte again.
    minifyWhitespace: true,
    legalComments: "external",
    // A map beside the bundle (`main.mjs.map`), without the sources' text and without a comment pointing at it:
    // the desk never loads it, and the bench's `--cpu-prof` summary reads profiles through it (bench/Profile.ts).
    sourcemap: "external",
    sourcesContent: false,
    // PGlite stays a package: it loads its WebAssembly and data files from beside its own modules.
    external: ["@electric-sql/pglite"],
    // Some CommonJS dependencies call require(); an ES module has none of its own.
    banner: {
      js:
        "import { createRequire as __deskRequire } from 'node:module'; const require = __deskRequire(import.meta.url);"
    },
    logLevel: "error"
  })
  return { file, seconds: (performance.now() - started) / 1000 }
}

/** The bundle, built first if it is missing or older than its sources. */
export const freshBundle = async (
  file = BUNDLE
) => (isStale(file) ? { ...(await bundleDesk(file)), built: true } : { file, built: false, seconds: 0 })

/** `${NAME:+word}` in the start script: the word when NAME is set and not empty, as sh expands it. */
const WHEN_SET = /^\$\{([A-Z_][A-Z0-9_]*):\+([^$}]*)\}$/

/**
 * How package.json's `start` script runs node (`[NAME=value ...] node <flags> scripts/start.mjs`): the variables
 * it sets and node's arguments, for the bench and tests to run the desk exactly so. `env` is the environment the
 * desk will run in: a flag written `${NAME:+--flag}` is among the arguments when NAME is set in it. `start`: the
 * script, package.json's by default.
 */
export const startCommand = (
  env = process.env,
  start = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts.start
) => {
  const words = start.trim().split(/\s+/)
  const sets = {}
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? "")) {
    const [name, ...value] = words.shift().split("=")
    sets[name] = value.join("=")
  }
  const [program, ...rest] = words
  if (program !== "node") throw new Error(`"start" is expected to run node, not: ${start}`)
  const args = rest.flatMap((word) => {
    if (!word.includes("$")) return [word]
    const conditional = WHEN_SET.exec(word)
    if (conditional === null) throw new Error(`"start": only \${NAME:+word} is understood here, not ${word}`)
    return env[conditional[1]] ? [conditional[2]] : []
  })
  return { env: sets, args }
}
