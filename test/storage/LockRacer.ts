// A desk's start reduced to its data-directory lock, for test/storage/DataDirLock.test.ts: from the moment given
// (epoch ms), every `spacing` ms, takes the lock of `<base>/<k>` and keeps it; prints the k it won, as JSON, then
// holds them until its stdin ends.
import { Effect, Exit, Scope } from "effect"
import { holdDataDir } from "../../adapters/storage/DataDirLock.ts"

const [base, at, trials, spacing] = process.argv.slice(2)
const scope = Effect.runSync(Scope.make())
const won: Array<number> = []
for (let k = 0; k < Number(trials); k++) {
  const start = Number(at) + k * Number(spacing)
  while (performance.timeOrigin + performance.now() < start) {
    // Spins to the moment: a timer would start the two racers milliseconds apart.
  }
  if (Exit.isSuccess(Effect.runSyncExit(Scope.extend(holdDataDir(`${base}/${k}`), scope)))) won.push(k)
}
// The locks stay held until the test has both racers' answers: one that ended would leave its locks to be taken
// over, rightly, by a racer running late.
process.stdout.write(`${JSON.stringify(won)}\n`)
process.stdin.on("end", () => process.exit(0))
process.stdin.resume()
