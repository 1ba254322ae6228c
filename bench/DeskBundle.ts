import { build } from "esbuild"
import { join, resolve } from "node:path"

/**
 * The desk as one ES module, built with esbuild (tsx's own compiler). It sits two directories below the
 * project root, like src/<dir>/, so the desk's paths relative to its modules (`../../static/`) still resolve.
 * PGlite stays a package: it loads its WebAssembly and data files from beside its own modules.
 */
export const bundleDesk = async (): Promise<{ readonly file: string; readonly seconds: number }> => {
  const started = performance.now()
  const file = resolve(".bench-data", "desk", "main.mjs")
  await build({
    entryPoints: [join("src", "main.ts")],
    outfile: file,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["@electric-sql/pglite"],
    // Some CommonJS dependencies call require(); an ES module has none of its own.
    banner: { js: "import { createRequire as __deskRequire } from 'node:module'; const require = __deskRequire(import.meta.url);" },
    logLevel: "error"
  })
  return { file, seconds: (performance.now() - started) / 1000 }
}
