import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Option } from "effect"
import { databaseOutage, isDatabaseOutage, unavailableFor } from "../../src/Desk/Outage.ts"

const pgError = (code: string, message = "boom") => Object.assign(new Error(message), { code })

describe("isDatabaseOutage", () => {
  it("is true for a database that cannot be reached, is shutting down or dropped the connection", () => {
    for (
      const error of [
        new SqlError({ message: "Failed to acquire connection", cause: pgError("ECONNREFUSED") }),
        new SqlError({ message: "Connection error", cause: new Error("Connection terminated unexpectedly") }),
        new SqlError({
          message: "Failed to execute statement",
          cause: pgError("57P01", "terminating connection due to administrator command")
        }),
        new SqlError({
          message: "Failed to execute statement",
          cause: pgError("57P03", "the database system is starting up")
        }),
        new SqlError({ message: "Failed to execute statement", cause: pgError("08006") }),
        new SqlError({
          message: "Failed to execute statement",
          cause: new Error("Client has encountered a connection error and is not queryable")
        }),
        new SqlError({
          message: "Failed to acquire connection for transaction",
          cause: new Error("timeout exceeded when trying to connect")
        })
      ]
    ) expect(isDatabaseOutage(error)).toBe(true)
  })

  it("is false for a statement the database refused, and for anything that is not a SqlError", () => {
    expect(
      isDatabaseOutage(
        new SqlError({ message: "Failed to execute statement", cause: pgError("42601", "syntax error") })
      )
    ).toBe(false)
    expect(isDatabaseOutage(new SqlError({ message: "Failed to execute statement", cause: pgError("23505") }))).toBe(
      false
    )
    expect(isDatabaseOutage(pgError("ECONNREFUSED"))).toBe(false)
    expect(isDatabaseOutage(undefined)).toBe(false)
  })

  it("finds the outage in a defect, as repositories raise it, or in a failure", () => {
    const down = new SqlError({ message: "Failed to acquire connection", cause: pgError("ECONNREFUSED") })
    expect(databaseOutage(Cause.sequential(Cause.fail("other"), Cause.die(down)))).toEqual(Option.some(down))
    expect(databaseOutage(Cause.fail(down))).toEqual(Option.some(down))
    expect(databaseOutage(Cause.die(new Error("bug")))).toEqual(Option.none())
  })
})

describe("unavailableFor", () => {
  it("answers a database out of disk or memory with a 503 to retry, not a 500", () => {
    for (const code of ["53100", "53200"]) {
      const full = new SqlError({
        message: "Failed to execute statement",
        cause: pgError(code, "could not extend file")
      })
      const answer = unavailableFor(Cause.die(full))
      expect(Option.map(answer, (_) => _.error.message), code).toEqual(
        Option.some("The database is out of disk or memory; retry in 5 seconds.")
      )
    }
    const refused = new SqlError({ message: "Failed to execute statement", cause: pgError("23505") })
    expect(unavailableFor(Cause.die(refused))).toEqual(Option.none())
  })
})
