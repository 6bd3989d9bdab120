import "server-only";
import { lookup as dnsLookup } from "node:dns/promises";
import net from "node:net";
import { loadConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";

/**
 * Webhook targets an alert may post to, checked when a rule is saved and again before every send:
 * https to a public address, or a host an admin allowed in `operations.webhookAllowedHosts` (then
 * http and private or loopback addresses too). Never credentials in the URL, never the console's own
 * database, never link-local or cloud metadata addresses, whatever the allow-list says. Every
 * address the name resolves to is checked, and the send connects to a checked address
 * (lib/alerts/send.ts), so a name cannot resolve differently between the check and the send.
 */
export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "reserved"
  | "link-local"
  | "metadata"
  | "unspecified"
  | "multicast";

function blockList(v4: Array<[string, number]>, v6: Array<[string, number]>): net.BlockList {
  const b = new net.BlockList();
  for (const [a, p] of v4) b.addSubnet(a, p, "ipv4");
  for (const [a, p] of v6) b.addSubnet(a, p, "ipv6");
  return b;
}

/** Checked in this order: the first list that holds an address names its class. */
const CLASSES: Array<[AddressClass, net.BlockList]> = [
  // AWS/GCP/Azure IMDS, AWS ECS task metadata, Alibaba, Oracle; AWS IMDS over IPv6.
  [
    "metadata",
    blockList(
      [
        ["169.254.169.254", 32],
        ["169.254.170.2", 32],
        ["100.100.100.200", 32],
        ["192.0.0.192", 32],
      ],
      [
        ["fd00:ec2::254", 128],
        ["fd00:ec2::23", 128],
      ],
    ),
  ],
  ["unspecified", blockList([["0.0.0.0", 8]], [["::", 128]])],
  ["loopback", blockList([["127.0.0.0", 8]], [["::1", 128]])],
  ["link-local", blockList([["169.254.0.0", 16]], [["fe80::", 10]])],
  [
    "multicast",
    blockList(
      [
        ["224.0.0.0", 4],
        ["255.255.255.255", 32],
      ],
      [["ff00::", 8]],
    ),
  ],
  [
    "private",
    blockList(
      [
        ["10.0.0.0", 8],
        ["172.16.0.0", 12],
        ["192.168.0.0", 16],
        ["100.64.0.0", 10],
      ],
      [["fc00::", 7]],
    ),
  ],
  [
    "reserved",
    blockList(
      [
        ["192.0.0.0", 24],
        ["192.0.2.0", 24],
        ["192.88.99.0", 24],
        ["198.18.0.0", 15],
        ["198.51.100.0", 24],
        ["203.0.113.0", 24],
        ["240.0.0.0", 4],
      ],
      // Documentation, discard, Teredo, 6to4 and NAT64 (they carry an IPv4 address that is not checked here), deprecated site-local.
      [
        ["2001:db8::", 32],
        ["100::", 64],
        ["2001::", 32],
        ["2002::", 16],
        ["64:ff9b::", 96],
        ["64:ff9b:1::", 48],
        ["fec0::", 10],
      ],
    ),
  ],
];
const GLOBAL_UNICAST_V6 = blockList([], [["2000::", 3]]);
const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** The class of one literal address (IPv4, IPv6, IPv4-mapped IPv6). Not an address at all: "reserved". */
export function classifyAddress(ip: string): AddressClass {
  const bare = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const mapped = MAPPED_V4.exec(bare);
  if (mapped) return classifyAddress(mapped[1]);
  const family = net.isIP(bare);
  if (family === 0) return "reserved";
  const type = family === 4 ? "ipv4" : "ipv6";
  for (const [cls, list] of CLASSES) if (list.check(bare, type)) return cls;
  if (family === 6 && !GLOBAL_UNICAST_V6.check(bare, "ipv6")) return "reserved";
  return "public";
}

/** Classes no allow-list entry opens: no webhook receiver lives there, and the metadata services do. */
const NEVER: ReadonlySet<AddressClass> = new Set(["metadata", "link-local", "unspecified", "multicast"]);
/** Host names of metadata services, refused before any lookup. */
const METADATA_NAMES = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
]);

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

const LOOKUP_TIMEOUT_MS = 5_000;

/** Every address of a name (dns.lookup, all of them, as the system resolver answers). */
export const systemLookup: Lookup = async (hostname) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`lookup of ${hostname} took over ${LOOKUP_TIMEOUT_MS} ms`)),
      LOOKUP_TIMEOUT_MS,
    );
  });
  try {
    const rows = await Promise.race([dnsLookup(hostname, { all: true, verbatim: true }), timeout]);
    return rows.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
  } finally {
    clearTimeout(timer);
  }
};

export interface TargetPolicy {
  /** `operations.webhookAllowedHosts`: host names or host:port (IPv6 in brackets when a port is given). */
  allowedHosts: readonly string[];
  /** host:port of the console's own database(s), never a target. */
  databases: ReadonlyArray<{ host: string; port: number }>;
  lookup: Lookup;
}

/** The database URLs the console uses (DATABASE_URL, DATABASE_OWNER_URL); none with the embedded database. */
export function databaseEndpoints(
  env: Record<string, string | undefined> = process.env,
): Array<{ host: string; port: number }> {
  const out: Array<{ host: string; port: number }> = [];
  for (const raw of [env.DATABASE_URL, env.DATABASE_OWNER_URL]) {
    if (!raw) continue;
    try {
      const u = new URL(raw);
      const host = normalHost(u.hostname);
      if (host) out.push({ host, port: u.port ? Number(u.port) : 5432 });
    } catch {
      /* not a URL (a socket path): nothing reachable over TCP to compare */
    }
  }
  return out;
}

export function defaultPolicy(): TargetPolicy {
  return {
    allowedHosts: loadConfig().operations.webhookAllowedHosts,
    databases: databaseEndpoints(),
    lookup: systemLookup,
  };
}

function normalHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
}

function parseAllowEntry(entry: string): { host: string; port: number | null } {
  const e = entry.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(e);
  if (bracketed) return { host: bracketed[1], port: bracketed[2] ? Number(bracketed[2]) : null };
  if (net.isIPv6(e)) return { host: e, port: null };
  const withPort = /^(.+):(\d+)$/.exec(e);
  if (withPort) return { host: normalHost(withPort[1]), port: Number(withPort[2]) };
  return { host: normalHost(e), port: null };
}

export function isAllowListed(allowedHosts: readonly string[], host: string, port: number): boolean {
  const h = normalHost(host);
  return allowedHosts.some((entry) => {
    const a = parseAllowEntry(entry);
    return a.host === h && (a.port === null || a.port === port);
  });
}

function refuse(
  userMessage: string,
  code: "bad_request:webhook" | "unavailable:webhook" = "bad_request:webhook",
  cause?: unknown,
): never {
  throw new AppError(code, { userMessage, cause });
}

export interface CheckedTarget {
  url: URL;
  /** Host name without brackets or trailing dot. */
  hostname: string;
  port: number;
  /** Every address the name resolved to, each checked; the send connects to the first. */
  addresses: ResolvedAddress[];
  allowListed: boolean;
}

/** The scheme, host and port only: what may be shown to every role and written to the audit log (a path may hold a token). */
export function targetOrigin(raw: string): string {
  try {
    const u = new URL(raw);
    return u.origin === "null" ? "(invalid URL)" : u.origin;
  } catch {
    return "(invalid URL)";
  }
}

/**
 * Checks a webhook URL against the policy, or throws `bad_request:webhook` (refused: the message
 * says why) or `unavailable:webhook` (its name does not resolve now).
 */
export async function checkWebhookTarget(raw: string, policy: TargetPolicy = defaultPolicy()): Promise<CheckedTarget> {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    refuse("The webhook URL is not a valid URL.");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") refuse("The webhook URL must start with https://.");
  if (url.username || url.password)
    refuse("The webhook URL must not hold a user name or password; use a token in its path, as Slack's do.");
  const hostname = normalHost(url.hostname);
  if (!hostname) refuse("The webhook URL has no host.");
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  const allowListed = isAllowListed(policy.allowedHosts, hostname, port);
  const display = url.host;
  // What no allow-list entry opens is said first, so the message never suggests listing it.
  if (METADATA_NAMES.has(hostname)) refuse(`${display} is a cloud metadata service, never a webhook target.`);
  if (net.isIP(hostname)) {
    const cls = classifyAddress(hostname);
    if (cls === "metadata") refuse(`${display} is a cloud metadata address, never a webhook target.`);
    if (NEVER.has(cls)) refuse(`${display} is a ${cls} address, never a webhook target.`);
  }
  if (url.protocol === "http:" && !allowListed) {
    refuse(
      `The webhook URL must use https. Plain http is only allowed to hosts an admin lists in operations.webhookAllowedHosts, and ${display} is not listed.`,
    );
  }

  let addresses: ResolvedAddress[];
  if (net.isIP(hostname)) {
    addresses = [{ address: hostname, family: net.isIP(hostname) === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await policy.lookup(hostname);
    } catch (e) {
      refuse(
        `The webhook host ${hostname} could not be resolved (${(e as NodeJS.ErrnoException).code ?? "no answer"}).`,
        "unavailable:webhook",
        e,
      );
    }
    if (addresses.length === 0)
      refuse(`The webhook host ${hostname} has no address.`, "unavailable:webhook", { code: "ENODATA" });
  }

  for (const { address } of addresses) {
    const cls = classifyAddress(address);
    const at = address === hostname ? display : `${display} (${address})`;
    if (cls === "metadata") refuse(`${at} is a cloud metadata address, never a webhook target.`);
    if (NEVER.has(cls)) refuse(`${at} is a ${cls} address, never a webhook target.`);
    if (cls !== "public" && !allowListed) {
      refuse(
        `${at} is a ${cls} address. Webhooks go to public hosts unless an admin lists the host in operations.webhookAllowedHosts.`,
      );
    }
  }
  await refuseDatabase(hostname, port, addresses, policy);
  return { url, hostname, port, addresses, allowListed };
}

/** The console's own database is never a target, by name or by any address it shares with the target (loopback counts as one). */
async function refuseDatabase(hostname: string, port: number, addresses: ResolvedAddress[], policy: TargetPolicy) {
  const mine = new Set(addresses.map((a) => canonical(a.address)));
  const loopback = addresses.some((a) => classifyAddress(a.address) === "loopback");
  for (const db of policy.databases) {
    if (db.port !== port) continue;
    let dbAddresses: string[] = [db.host];
    if (!net.isIP(db.host))
      dbAddresses = await policy
        .lookup(db.host)
        .then((r) => r.map((a) => a.address))
        .catch(() => [db.host]);
    const same =
      db.host === hostname ||
      dbAddresses.some((a) => mine.has(canonical(a))) ||
      (loopback && dbAddresses.some((a) => classifyAddress(a) === "loopback"));
    if (same) refuse(`${hostname}:${port} is the console's own database, never a webhook target.`);
  }
}

function canonical(ip: string): string {
  const mapped = MAPPED_V4.exec(ip);
  if (mapped) return mapped[1];
  if (net.isIPv6(ip)) return new net.SocketAddress({ address: ip, family: "ipv6" }).address.toLowerCase();
  return ip;
}
