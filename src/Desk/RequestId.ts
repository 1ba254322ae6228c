import { randomUUID } from "node:crypto"

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Keeps a caller's well-formed X-Request-Id (for tracing through proxies), otherwise makes one. */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && SAFE_ID.test(incoming) ? incoming : randomUUID()
