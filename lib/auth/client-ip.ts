import "server-only";
import { randomUUID } from "node:crypto";
import { BlockList, isIP } from "node:net";
import { trustedProxyEntries } from "@/lib/config";
import { ARRIVED_FORWARDED_FOR, ARRIVED_REAL_IP, ARRIVED_REQUEST_ID } from "@/lib/auth/forwarded-headers";

/** Header lookup for both Headers and plain objects (next-auth passes either). */
export function headerOf(headers: unknown, name: string): string | null {
  if (!headers) return null;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  const v = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
}

/**
 * One address in canonical text (IPv4 dotted; IPv6 compressed, lowercase; IPv4-mapped IPv6 as
 * IPv4, since a dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d), or null when it is not
 * an address. Accepts what proxies write: "[v6]:port", "v4:port", a zone id ("fe80::1%eth0").
 */
export function normalizeIp(raw: string | null | undefined): string | null {
  if (!raw) return null;
  let s = raw.trim();
  if (s.length > 64) return null;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(s);
  if (bracketed) s = bracketed[1];
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d{1,5}$/.test(s)) s = s.slice(0, s.lastIndexOf(":"));
  s = s.replace(/%[\w.-]{1,32}$/, "");
  const kind = isIP(s);
  if (kind === 4) return s;
  if (kind !== 6) return null;
  const v6 = new URL(`http://[${s}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
  if (!mapped) return v6;
  const [hi, lo] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

export interface TrustedProxies {
  has(ip: string): boolean;
  /** Entries that are neither an address nor a CIDR range (ignored: trusting less is the safe side). */
  invalid: string[];
}

/** Parses DLQ_TRUSTED_PROXIES entries: addresses and CIDR ranges, IPv4 and IPv6. */
export function parseTrustedProxies(entries: string[]): TrustedProxies {
  const list = new BlockList();
  const invalid: string[] = [];
  for (const entry of entries) {
    const [addr, bits, extra] = entry.split("/");
    const ip = normalizeIp(addr);
    const kind = ip ? isIP(ip) : 0;
    const max = kind === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (!ip || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
      invalid.push(entry);
      continue;
    }
    list.addSubnet(ip, prefix, kind === 4 ? "ipv4" : "ipv6");
  }
  return { has: (ip) => list.check(ip, isIP(ip) === 4 ? "ipv4" : "ipv6"), invalid };
}

/** Forwarded hops looked at, at most: a longer chain ends the walk at the last hop believed. */
const MAX_HOPS = 32;

export interface ArrivedRequest {
  /** The socket's peer: X-Forwarded-For as Next filled it after proxy.ts removed the client's. */
  peer: string | null;
  /** X-Forwarded-For, X-Real-IP and X-Request-Id as the request arrived (moved by proxy.ts). */
  forwardedFor: string | null;
  realIp: string | null;
  requestId: string | null;
  /** The id proxy.ts made for this request. */
  serverRequestId: string | null;
}

export interface ClientIdentity {
  /** The client address for the audit log and the sign-in limiter (null when the socket had none). */
  ip: string | null;
  /** The row's request id: a trusted proxy's, else the server's own. */
  requestId: string;
  /** An id an untrusted client sent, kept apart (bounded, safe characters only), never as requestId. */
  clientRequestId: string | null;
  /** The immediate peer is a configured proxy. */
  viaTrustedProxy: boolean;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Whom to believe. Only when the immediate peer is a trusted proxy are the forwarding headers read:
 * X-Forwarded-For walked from the right (each hop was appended by the proxy before it), skipping
 * trusted proxies, to the first address that is not one; X-Real-IP when there is no chain. An
 * unreadable hop ends the walk at the last address believed. Otherwise the address is the peer
 * itself, and a client's X-Request-Id is only recorded as `clientRequestId`.
 */
export function resolveClient(req: ArrivedRequest, trusted: TrustedProxies): ClientIdentity {
  // Next writes a single address; a list means proxy.ts did not run: take its last entry, the one Next or the nearest hop wrote.
  const peer = normalizeIp(req.peer?.split(",").at(-1));
  const viaTrustedProxy = peer !== null && trusted.has(peer);
  let ip = peer;
  if (viaTrustedProxy) {
    const hops = (req.forwardedFor ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean);
    // Next fills a missing X-Forwarded-For with the socket address before proxy.ts moves it: a
    // chain that is just the peer came from no proxy's header.
    if (hops.length && normalizeIp(hops[hops.length - 1]) === peer) hops.pop();
    if (hops.length) {
      for (let i = hops.length - 1, n = 0; i >= 0 && n < MAX_HOPS; i--, n++) {
        const hop = normalizeIp(hops[i]);
        if (!hop) break;
        ip = hop;
        if (!trusted.has(hop)) break;
      }
    } else {
      ip = normalizeIp(req.realIp) ?? peer;
    }
  }
  const arrived = req.requestId?.trim() ?? "";
  const server = req.serverRequestId && REQUEST_ID.test(req.serverRequestId) ? req.serverRequestId : randomUUID();
  if (viaTrustedProxy && REQUEST_ID.test(arrived))
    return { ip, requestId: arrived, clientRequestId: null, viaTrustedProxy };
  const cleaned = arrived.replace(/[^A-Za-z0-9._:-]/g, "").slice(0, 128);
  return { ip, requestId: server, clientRequestId: cleaned || null, viaTrustedProxy };
}

let cached: { raw: string; trusted: TrustedProxies } | null = null;

/** DLQ_TRUSTED_PROXIES, parsed once per value; bad entries are reported once and ignored. */
export function trustedProxies(env: Record<string, string | undefined> = process.env): TrustedProxies {
  const raw = env.DLQ_TRUSTED_PROXIES ?? "";
  if (cached?.raw === raw) return cached.trusted;
  const trusted = parseTrustedProxies(trustedProxyEntries(env));
  if (trusted.invalid.length)
    console.warn(
      `[auth] DLQ_TRUSTED_PROXIES: ignored entries that are not an address or CIDR range: ${trusted.invalid.join(", ")}`,
    );
  cached = { raw, trusted };
  return trusted;
}

/** The client identity of a request whose headers went through proxy.ts (Headers or a plain object). */
export function clientIdentity(headers: unknown, trusted: TrustedProxies = trustedProxies()): ClientIdentity {
  return resolveClient(
    {
      peer: headerOf(headers, "x-forwarded-for"),
      forwardedFor: headerOf(headers, ARRIVED_FORWARDED_FOR),
      realIp: headerOf(headers, ARRIVED_REAL_IP),
      requestId: headerOf(headers, ARRIVED_REQUEST_ID),
      serverRequestId: headerOf(headers, "x-request-id"),
    },
    trusted,
  );
}

/** The client address alone (see clientIdentity). */
export function clientIp(headers: unknown): string | null {
  return clientIdentity(headers).ip;
}
