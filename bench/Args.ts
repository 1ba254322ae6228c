import { parseArgs } from "node:util"

/** One option of a bench script: its type, its default, and a line saying what it does. */
export interface BenchOption {
  readonly type: "string" | "boolean"
  readonly default?: string | boolean
  readonly help: string
}

type Values<O extends Record<string, BenchOption>> = {
  [K in keyof O]: O[K]["type"] extends "boolean" ? boolean
    : O[K]["default"] extends string ? string
    : string | undefined
}

/** The usage text: the command, then each option with its default and what it does. */
export const usageOf = (command: string, about: string, options: Record<string, BenchOption>) => {
  const lines = Object.entries(options).map(([name, option]) => {
    const flag = option.type === "boolean" ? `--${name}` : `--${name} <value>`
    const fallback = option.type === "string" && option.default !== undefined ? ` (default: ${option.default})` : ""
    return `  ${flag.padEnd(26)}${option.help}${fallback}`
  })
  return `Usage: ${command} [options]\n\n${about}\n\nOptions:\n${lines.join("\n")}\n  ${
    "--help".padEnd(26)
  }print this and exit\n`
}

/**
 * The command line of a bench script, as node:util's parseArgs reads it (strict: every option named). `--help`
 * prints the usage and exits 0; an unknown option, a missing value or a stray argument prints one line and the
 * usage on stderr and exits 2, instead of a stack trace.
 */
export const benchArgs = <const O extends Record<string, BenchOption>>(
  command: string,
  about: string,
  options: O,
  argv: ReadonlyArray<string> = process.argv.slice(2)
): Values<O> => {
  const usage = usageOf(command, about, options)
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(usage)
    process.exit(0)
  }
  const config = Object.fromEntries(
    Object.entries(options).map(([name, { default: fallback, type }]) => [
      name,
      fallback === undefined ? { type } : { type, default: fallback }
    ])
  ) as Record<string, { type: "string" | "boolean"; default?: string | boolean }>
  try {
    return parseArgs({ args: [...argv], options: config, strict: true, allowPositionals: false }).values as Values<O>
  } catch (error) {
    process.stderr.write(`${command}: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`)
    process.exit(2)
  }
}
