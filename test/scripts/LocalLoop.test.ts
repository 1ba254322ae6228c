import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { createServer } from "node:net"
import { promisify } from "node:util"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { TestDesk } from "../support/Desk.ts"
import { fileHandoff, freshPayee, TestChain, x402DeskOn } from "../x402/support/Chain.ts"

const run = promisify(execFile)

/** A loopback port nothing listens on: taken from the OS, then released. */
const unusedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** Runs a script of scripts/ with only the environment given (plus PATH), as a person's shell would. */
const script = (name: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  run("node", ["--import", "tsx", `scripts/${name}`, ...args], { env: { PATH: process.env.PATH ?? "", ...env } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr
    })
  )

describe("the local x402 loop on any port", () => {
  describe("against a desk on a local chain", () => {
    layer(x402DeskOn(Pglite.layer({})), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect(
        "npm run buy finds the desk through PORT or DESK_URL and prints every balance before and after",
        () =>
          Effect.gen(function*() {
            const desk = yield* TestDesk
            const { chain } = yield* TestChain
            const payee = freshPayee()
            const { id } = yield* fileHandoff(0.25, payee)
            const port = new URL(desk.url).port
            const bought = yield* Effect.promise(() =>
              script("buy.ts", [id], {
                PORT: port,
                DESK_CHAIN_RPC_URL: chain.rpcUrl,
                BUYER_PRIVATE_KEY: chain.accounts.buyer.privateKey
              })
            )
            expect(bought.stderr).toBe("")
            expect(bought.code).toBe(0)
            expect(bought.stdout).toContain(`desk     ${desk.url}`)
            expect(bought.stdout).toMatch(/unlock {3}200, receipt rcpt_/)
            expect(bought.stdout).toMatch(/payout {3}sent \(0x[0-9a-f]{64}\)/)
            const row = (name: string) =>
              bought.stdout.split("\n").find((line) => new RegExp(`^${name}\\s+0x`).test(line))!.trim().split(/\s+/)
            expect(row("buyer").slice(2)).toEqual([expect.any(String), expect.any(String), "-0.25"])
            expect(row("desk")).toEqual([
              "desk",
              chain.accounts.desk.address,
              expect.any(String),
              expect.any(String),
              "+0.025"
            ])
            expect(row("filer")).toEqual(["filer", payee, "0", "0.225", "+0.225"])

            // DESK_URL names the desk as well, and wins over PORT.
            const second = yield* fileHandoff(0.1, freshPayee())
            const again = yield* Effect.promise(() =>
              script("buy.ts", [second.id], {
                DESK_URL: desk.url,
                PORT: "1",
                DESK_CHAIN_RPC_URL: chain.rpcUrl,
                BUYER_PRIVATE_KEY: chain.accounts.buyer.privateKey
              })
            )
            expect(again.code, again.stderr).toBe(0)
            expect(again.stdout).toContain("+0.09")
          }),
        { timeout: 90_000 }
      )
    })
  })

  it("a desk that does not answer is one line naming where the script looked, and how to point it", async () => {
    const port = await unusedPort()
    const failed = await script("buy.ts", ["DESK-1"], { PORT: String(port), BUYER_PRIVATE_KEY: `0x${"1".repeat(64)}` })
    expect(failed.code).toBe(1)
    expect(failed.stderr.trim().split("\n")).toEqual([
      `buy: the desk at http://127.0.0.1:${port} does not answer: connect ECONNREFUSED 127.0.0.1:${port}. ` +
      "Start it (npm start) or point --desk, DESK_URL or PORT at it"
    ])
  }, 60_000)

  it("both scripts say in their help that they honour PORT and DESK_URL", async () => {
    for (const name of ["buy.ts", "chain.ts"]) {
      const help = await script(name, ["--help"], {})
      expect(help.code, name).toBe(0)
      expect(help.stdout, name).toMatch(/PORT/)
      expect(help.stdout, name).toMatch(/DESK_URL/)
    }
  }, 60_000)
})
