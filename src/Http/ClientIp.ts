import { Config, ConfigError, Context, Either, Layer } from "effect"
import type { IncomingMessage } from "node:http"
import { isIP } from "node:net"

const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/

/** One spelling per address, so `::ffff:127.0.0.1`, `[::1]:80` and `1.2.3.4:5678` share a budget with their plain form. */
export const normalizeIp = (raw: string): string | undefined => {
  // The usual spelling, already plain: one check instead of the steps below.
  if (isIP(raw) === 4) return raw
  let ip = raw.trim().toLowerCase()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(ip)
  if (bracketed) ip = bracketed[1]!
  else if (/^[\d.]+:\d+$/.test(ip)) ip = ip.slice(0, ip.lastIndexOf(":"))
  ip = ip.split("%")[0]!
  if (ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4) return ip.slice(7)
  const family = isIP(ip)
  if (family === 4) return ip
  if (family === 0) return undefined
  const canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1)
  const mapped = mappedHex.exec(canonical)
  if (!mapped) return canonical
  const [high, low] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)]
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
}

/**
 * The socket peer, unless it is a trusted proxy: then the right-most X-Forwarded-For entry that is not a
 * trusted proxy. Entries left of it are whatever the client sent, so trusting them would let a client pick
 * a fresh budget per request.
 */
export const clientIp = (
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trusted: ReadonlySet<string>
): string => {
  const peer = socketAddress === undefined ? undefined : normalizeIp(socketAddress)
  if (peer === undefined) return "unknown"
  if (forwardedFor === undefined || !trusted.has(peer)) return peer
  let current = peer
  const hops = forwardedFor.split(",")
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!.trim()
    if (hop === "") continue
    const ip = normalizeIp(hop)
    // A hop we cannot read breaks the chain of trust: charge the last proxy we do trust.
    if (ip === undefined) return current
    if (!trusted.has(ip)) return ip
    current = ip
  }
  return current
}

/** The eight 16-bit groups of a canonical IPv6 address, `::` expanded. */
const groupsOf = (ipv6: string): Array<string> => {
  const [head, tail] = ipv6.includes("::") ? ipv6.split("::") as [string, string] : [ipv6, undefined]
  const left = head === "" ? [] : head.split(":")
  const right = tail === undefined || tail === "" ? [] : tail.split(":")
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => "0")
  return [...left, ...zeros, ...right]
}

/**
 * Whose budget a request spends: an IPv4 address is one client, but an IPv6 host is routinely given a whole
 * /64 (and picks a fresh address in it at will), so IPv6 clients are counted per /64 network.
 */
export const rateKeyOf = (ip: string): string => {
  // `ip` is as clientIp spells it: IPv6 addresses alone hold a colon.
  if (!ip.includes(":")) return ip
  return `${groupsOf(ip).slice(0, 4).join(":")}::/64`
}

/** The client a request counts for (its rate-limit budget, its share of the desk's turns). */
export const clientKey = (
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trusted: ReadonlySet<string>
): string => rateKeyOf(clientIp(socketAddress, forwardedFor, trusted))

const CLIENT_KEY = Symbol("desk:client-key")

/**
 * `clientKey` of a request as Node received it, worked out once: a read that waits its turn is placed by it
 * (src/Http/Admission.ts) and the edge charges it, and the answer is kept on the request for the second ask.
 */
export const requestClientKey = (request: IncomingMessage, trusted: ReadonlySet<string>): string => {
  const memo = request as IncomingMessage & { [CLIENT_KEY]?: string }
  if (memo[CLIENT_KEY] !== undefined) return memo[CLIENT_KEY]
  // Node joins repeated X-Forwarded-For lines into one.
  const forwarded = request.headers["x-forwarded-for"]
  return memo[CLIENT_KEY] = clientKey(
    request.socket.remoteAddress,
    Array.isArray(forwarded) ? forwarded.join(",") : forwarded,
    trusted
  )
}

export const parseTrustedProxies = (list: string): Either.Either<ReadonlySet<string>, ConfigError.ConfigError> => {
  const ips = new Set<string>()
  for (const entry of list.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
    const ip = normalizeIp(entry)
    if (ip === undefined) {
      return Either.left(ConfigError.InvalidData(["DESK_TRUST_PROXY"], `"${entry}" is not an IP address`))
    }
    ips.add(ip)
  }
  return Either.right(ips)
}

export const trustedProxiesConfig: Config.Config<ReadonlySet<string>> = Config.string("DESK_TRUST_PROXY").pipe(
  Config.withDefault(""),
  Config.mapOrFail(parseTrustedProxies)
)

/** Addresses of the reverse proxies whose X-Forwarded-For we believe (`DESK_TRUST_PROXY`, comma-separated). */
export class TrustedProxies extends Context.Tag("TrustedProxies")<TrustedProxies, ReadonlySet<string>>() {
  static readonly layerConfig = Layer.effect(TrustedProxies, trustedProxiesConfig)
  static readonly layer = (ips: ReadonlyArray<string>) =>
    Layer.effect(TrustedProxies, parseTrustedProxies(ips.join(",")))
}
