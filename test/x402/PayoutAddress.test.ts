import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import { send, TestChain, x402DeskOn } from "./support/Chain.ts"

for (const backend of backends) {
  describe.skipIf(!backend.available)(`payout addresses on the x402 rail over ${backend.name}`, () => {
    layer(x402DeskOn(backend.layer), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("the zero address, the token contract and the desk's payTo are refused, naming payoutAddress", () =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          const filer = newAgentId()
          const unusable = [
            "0x0000000000000000000000000000000000000000",
            chain.tokenAddress,
            chain.accounts.desk.address,
            chain.accounts.desk.address.toLowerCase()
          ]
          for (const payoutAddress of unusable) {
            const registered = yield* send("/api/agents", { json: { id: filer, payoutAddress }, agent: filer })
            expect({ payoutAddress, status: registered.status }).toEqual({ payoutAddress, status: 422 })
            expect(registered.json).toMatchObject({ error: "invalid_request", issues: [{ path: "payoutAddress" }] })
            const filed = yield* send("/api/handoffs", { json: filing(filer, { payoutAddress }), agent: filer })
            expect(filed.status).toBe(422)
            expect(filed.json.issues.map((_: { path: string }) => _.path)).toEqual(["payoutAddress"])
          }
          expect((yield* send(`/api/agents/${filer}`)).status).toBe(404)
          const usable = yield* send("/api/agents", {
            json: { id: filer, payoutAddress: chain.accounts.filer.address },
            agent: filer
          })
          expect(usable.json.payoutAddress).toBe(chain.accounts.filer.address)
        }))
    })
  })
}
