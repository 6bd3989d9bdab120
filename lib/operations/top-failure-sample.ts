import "server-only";
import type { Role } from "@/lib/auth/permissions";
import { displayText } from "@/lib/brokers/display";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { Letter } from "@/lib/brokers/contract/letter";
import { listAdapters } from "@/lib/connections/registry";
import { maskTextWithRules } from "@/lib/masking/engine";
import { maskingHashKey } from "@/lib/masking/key";
import { policyFrom } from "@/lib/masking/policy";
import { loadMaskingConfig } from "@/lib/masking/store";
import { processState } from "@/lib/process-state";
import { CAUSE_FQCN_HEADER, cachedResolveFailure } from "@/lib/triage/index-row";
import { withTimeout } from "@/lib/use-case/connection";
import { groupName, largestGroup, type TopFailure } from "./top-failure-view";

/**
 * The top failure of DLQs never scanned, from their newest letters, read in the background where
 * reading costs the DLQ nothing: letters reached by position (Kafka offsets), so a read neither
 * takes them from a consumer nor hides them from another read nor counts against them, and the
 * DLQ has no read risk. (A RabbitMQ or Pulsar read holds the letters it reads until it ends, so
 * those DLQs wait for a scan.) The overview never waits for a read: it shows what the last round
 * found and starts the next one when that is older than REFRESH_MS.
 */

const SAMPLE_LETTERS = 50;
const MAX_DLQS_PER_ROUND = 40;
const REFRESH_MS = 60_000;
const READ_TIMEOUT_MS = 15_000;

/** A sampled top failure, kept with its raw message (masked per role when shown); its source is "sample". */
type Sampled = Omit<TopFailure, "source">;

const state = processState("overview-failure-samples", () => ({
  found: new Map<string, Sampled>(),
  startedAt: 0,
  running: false,
}));

const keyOf = (connectionId: string, queue: string) => `${connectionId}\u0000${queue}`;

/** Reading costs nothing on this broker: by position, no hidden letters, no counted delivery. */
export const readsFree = (a: Pick<BrokerAdapter, "capabilities">) =>
  a.capabilities.randomAccess && !a.capabilities.readHidesLetters && !a.capabilities.readCountsAsDelivery;

function causeHeader(l: Letter): string | null {
  for (let i = l.headers.length - 1; i >= 0; i--)
    if (l.headers[i].name === CAUSE_FQCN_HEADER) return displayText(l.headers[i].value);
  return null;
}

/** The letters' largest group by the triage index's own key (root cause class, else reason). */
export function sampleGroups(letters: Letter[]) {
  const groups = new Map<
    string,
    {
      key: string;
      basis: "exception" | "reason";
      exceptionClass: string | null;
      reason: string | null;
      message: string | null;
      count: number;
    }
  >();
  for (const l of letters) {
    const g = cachedResolveFailure(l.failure, causeHeader(l), undefined).group;
    const had = groups.get(g.key);
    if (had) had.count++;
    else
      groups.set(g.key, {
        key: g.key,
        basis: g.basis,
        exceptionClass: g.exceptionClass,
        reason: g.reason,
        message: g.normalizedMessage,
        count: 1,
      });
  }
  return largestGroup([...groups.values()]);
}

async function sampleOne(a: BrokerAdapter, queue: string): Promise<Sampled | null> {
  const page = await withTimeout(
    a.browse(queue, { offset: 0, limit: SAMPLE_LETTERS, maxBodyBytes: 0, order: "newest" }),
    READ_TIMEOUT_MS,
    `sample ${a.connectionId}/${queue}`,
  );
  const found = sampleGroups(page.letters);
  if (!found) return null;
  const { top, total } = found;
  return {
    connectionId: a.connectionId,
    queue,
    basis: top.basis,
    label: groupName(top),
    message: top.message,
    count: top.count,
    total,
    at: new Date().toISOString(),
  };
}

async function refresh(scanned: Set<string>): Promise<void> {
  const next = new Map<string, Sampled>();
  for (const a of listAdapters().filter(readsFree)) {
    const dlqs = await withTimeout(a.listDlqs(), READ_TIMEOUT_MS, `list ${a.connectionId}`).catch(() => []);
    const due = dlqs
      .filter((d) => !d.readRisk && d.depth !== 0 && !scanned.has(keyOf(a.connectionId, d.name)))
      .slice(0, MAX_DLQS_PER_ROUND - next.size);
    for (const d of due) {
      const s = await sampleOne(a, d.name).catch(() => null);
      if (s) next.set(keyOf(s.connectionId, s.queue), s);
    }
    if (next.size >= MAX_DLQS_PER_ROUND) break;
  }
  state.found = next;
}

/**
 * The sampled top failures of DLQs without a scan, masked for `role`. Starts a background round
 * when the last is older than REFRESH_MS; never waits for it.
 */
export async function sampledTopFailures(role: Role, scanned: TopFailure[]): Promise<TopFailure[]> {
  const scannedKeys = new Set(scanned.map((s) => keyOf(s.connectionId, s.queue)));
  if (!state.running && Date.now() - state.startedAt > REFRESH_MS) {
    state.running = true;
    state.startedAt = Date.now();
    void refresh(scannedKeys)
      .catch((e) => console.error("[overview] sampling top failures failed:", e instanceof Error ? e.message : e))
      .finally(() => {
        state.running = false;
      });
  }
  const found = [...state.found.values()].filter((s) => !scannedKeys.has(keyOf(s.connectionId, s.queue)));
  if (found.length === 0) return [];
  const masking = await loadMaskingConfig();
  const hashKey = maskingHashKey();
  return found.map((s) => {
    const policy = policyFrom(masking, role, s.connectionId, s.queue, hashKey);
    const message =
      s.message && policy.rules.length ? maskTextWithRules(s.message, policy.rules, policy.hashKey).text : s.message;
    return { ...s, message, source: "sample" as const };
  });
}
