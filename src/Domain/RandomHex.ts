import { randomFillSync } from "node:crypto"

const POOL_BYTES = 4096
const pool = Buffer.alloc(POOL_BYTES)
let used = POOL_BYTES

/**
 * `bytes` bytes from the operating system's CSPRNG, as lowercase hex. Drawn from a pool filled 4 kB at a time, as
 * Node's own `randomUUID` does: `randomBytes(12)` makes a buffer and a call into OpenSSL each time, 8-10 µs here,
 * about 1 % of a desk-receipt unlock's CPU; each byte of the pool is handed out once.
 */
export const randomHex = (bytes: number): string => {
  if (bytes > POOL_BYTES) throw new RangeError(`randomHex draws at most ${POOL_BYTES} bytes`)
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool)
    used = 0
  }
  const hex = pool.toString("hex", used, used + bytes)
  used += bytes
  return hex
}
