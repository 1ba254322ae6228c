import { describe, expect, it } from "@effect/vitest"
import { afterStatement, OUTSIDE, type TransactionScope } from "../../adapters/storage/TransactionScope.ts"

const after = (...texts: ReadonlyArray<string>): TransactionScope => texts.reduce(afterStatement, OUTSIDE)
const lifted = (...texts: ReadonlyArray<string>) => after(...texts).lifted

describe("a connection's transaction scope, followed from its statements", () => {
  it("a lift holds inside its transaction only, and not outside one", () => {
    expect(lifted("BEGIN", "SET LOCAL statement_timeout = 0")).toBe(true)
    expect(lifted("START TRANSACTION ISOLATION LEVEL REPEATABLE READ", "set local statement_timeout to '0';")).toBe(
      true
    )
    expect(lifted("SET LOCAL statement_timeout = 0")).toBe(false)
    expect(lifted("BEGIN", "SET LOCAL statement_timeout = 5000")).toBe(false)
    expect(lifted("BEGIN", "SET LOCAL statement_timeout = 0", "SELECT 1", "ANALYZE handoffs")).toBe(true)
  })

  it("every ending ends it; COMMIT AND CHAIN opens the next transaction without the lift", () => {
    for (const end of ["COMMIT", "ROLLBACK", "END", "ABORT", "commit;", "ROLLBACK WORK", "END TRANSACTION ;"]) {
      expect(after("BEGIN", "SET LOCAL statement_timeout = 0", end), end).toEqual(OUTSIDE)
    }
    expect(after("BEGIN", "SET LOCAL statement_timeout = 0", "COMMIT AND CHAIN")).toEqual({ ...OUTSIDE, open: true })
    expect(after("BEGIN", "COMMIT AND NO CHAIN")).toEqual(OUTSIDE)
  })

  it("a rollback to a savepoint undoes a lift made after it; a release keeps it", () => {
    const lift = "SET LOCAL statement_timeout = 0"
    expect(lifted("BEGIN", "SAVEPOINT a", lift, "ROLLBACK TO SAVEPOINT a")).toBe(false)
    expect(lifted("BEGIN", lift, "SAVEPOINT a", "ROLLBACK TO a")).toBe(true)
    expect(lifted("BEGIN", "SAVEPOINT a", "SAVEPOINT b", lift, "ROLLBACK TO SAVEPOINT B")).toBe(false)
    expect(lifted("BEGIN", "SAVEPOINT a", lift, "RELEASE SAVEPOINT a")).toBe(true)
    expect(lifted("BEGIN", "SAVEPOINT a", lift, "RELEASE a", "ROLLBACK TO SAVEPOINT a")).toBe(true)
    // Quoted names keep their case; a rollback to a savepoint it does not know changes nothing.
    expect(lifted("BEGIN", "SAVEPOINT \"A\"", lift, "ROLLBACK TO SAVEPOINT a")).toBe(true)
    expect(after("BEGIN", "SAVEPOINT a", "ROLLBACK TO SAVEPOINT a").savepoints).toEqual([{ name: "a", lifted: false }])
  })

  it("ROLLBACK TO SAVEPOINT is not the end of the transaction; BEGIN inside one changes nothing", () => {
    expect(after("BEGIN", "SAVEPOINT a", "ROLLBACK TO SAVEPOINT a").open).toBe(true)
    expect(lifted("BEGIN", "SET LOCAL statement_timeout = 0", "BEGIN")).toBe(true)
  })
})
