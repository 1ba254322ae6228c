import { Config } from "effect"

/**
 * A whole number of `unit` within [min, max], `fallback` when unset: a setting outside them (a negative interval
 * spun the payout loop without a pause) stops the desk at startup in one line naming it.
 */
export const boundedInteger = (name: string, fallback: number, min: number, max: number, unit = "milliseconds") =>
  Config.integer(name).pipe(
    Config.validate({
      message: `${name} must be a whole number of ${unit} between ${min} and ${max}`,
      validation: (n) => n >= min && n <= max
    }),
    Config.withDefault(fallback)
  )

/** An http(s) URL with no query, fragment or credentials: the base every absolute link of the desk starts with. */
export const isBaseUrl = (url: URL): boolean =>
  (url.protocol === "http:" || url.protocol === "https:") && url.search === "" && url.hash === "" &&
  url.username === "" && url.password === ""
