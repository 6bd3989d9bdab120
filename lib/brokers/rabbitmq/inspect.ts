import "server-only";
import type { Channel } from "amqplib";
import type { DlqEntryConfig } from "@/lib/config";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerInspection, ConfigFinding, DlqVitals, InspectOptions } from "@/lib/brokers/contract/inspection";
import { closeQuietly, mapAmqpError } from "@/lib/brokers/rabbitmq/connection";
import { ManagementError, type ManagementClient, type MgmtQueue } from "@/lib/brokers/rabbitmq/management";
import { discoverDlqs, safeCopiesOf } from "@/lib/brokers/rabbitmq/discovery";
import { configFindings, messageTtlOf, queueTypeOf, type BrokerAnswers } from "@/lib/brokers/rabbitmq/config-checks";

/**
 * The operations sampler's look at one RabbitMQ vhost (`BrokerAdapter.inspect`): five management
 * requests whatever the number of queues (queues with their effective policies, exchanges,
 * bindings, policies, overview), no AMQP at all, no letter read.
 */

/** A head timestamp this far ahead of now is no seconds-since-epoch value (some producers put milliseconds there). */
const FUTURE_SKEW_MS = 86_400_000;

/**
 * When the oldest letter's clock started, as far as the management API tells it: the head
 * message's AMQP `timestamp` property (head_message_timestamp, seconds), which RabbitMQ gives for
 * classic queues whose head message is in memory; never for quorum queues (3.10). It is the time
 * the producer stamped, which dead-lettering keeps: no later than the letter's arrival in the
 * DLQ, so an age or a retention deadline taken from it errs early, never late.
 */
export function oldestAtOf(q: MgmtQueue, nowMs: number): string | null {
  const ts = q.head_message_timestamp;
  if (typeof ts !== "number" || !Number.isFinite(ts) || ts <= 0 || !q.messages) return null;
  const ms = ts * 1000;
  return ms > nowMs + FUTURE_SKEW_MS ? null : new Date(ms).toISOString();
}

/** A DLQ's vitals from its management listing entry; `q` undefined: the queue does not exist. */
export function vitalsOf(
  name: string,
  q: MgmtQueue | undefined,
  configuredType: string | undefined,
  nowMs: number,
): DlqVitals {
  if (!q)
    return {
      name,
      queueType: configuredType ?? "unknown",
      depth: null,
      inFlight: null,
      enteredTotal: null,
      oldestAt: null,
      retentionMs: null,
      retentionClock: "arrival",
    };
  return {
    name,
    queueType: queueTypeOf(q),
    depth: typeof q.messages === "number" ? q.messages : null,
    inFlight: typeof q.messages_unacknowledged === "number" ? q.messages_unacknowledged : null,
    // RabbitMQ's per-queue publish counter (message_stats.publish) counts what channels publish to
    // the queue, not the letters the broker dead-letters into it (checked on 3.10.8 in
    // inspect.integration.test.ts): it would leave out exactly the letters that matter. No
    // counter, so the sampler takes inflow from depth increases.
    enteredTotal: null,
    oldestAt: oldestAtOf(q, nowMs),
    // Dead-lettering removes a letter's own expiration, so the queue's TTL alone applies, from arrival.
    retentionMs: messageTtlOf(q)?.value ?? null,
    retentionClock: "arrival",
  };
}

export interface InspectTarget {
  vhost: string;
  /** The DLQs `listDlqs` lists, in its order. */
  names: string[];
  configured: ReadonlyArray<DlqEntryConfig>;
}

/** Vitals and findings from the management API's answers. */
export function inspectionFrom(
  a: BrokerAnswers,
  target: InspectTarget,
  nowMs: number,
): Omit<BrokerInspection, "calls"> {
  const byName = new Map(a.queues.map((q) => [q.name, q]));
  const configuredType = (name: string) => target.configured.find((c) => c.name === name)?.queueType;
  return {
    dlqs: target.names.map((name) => vitalsOf(name, byName.get(name), configuredType(name), nowMs)),
    findings: configFindings(a, {
      vhost: target.vhost,
      dlqs: new Set(target.names.filter((n) => byName.has(n))),
      configured: target.configured,
    }),
  };
}

export interface InspectContext {
  vhost: string;
  endpoint: string;
  displayName: string;
  mgmt: ManagementClient | null;
  discover: boolean;
  configured: ReadonlyArray<DlqEntryConfig>;
  /** The adapter's own DLQ set (listDlqs), from these queues; `queues` null: no management API. */
  dlqNames(snap: {
    queues: Map<string, MgmtQueue> | null;
    discovered: Map<string, string[]>;
    safeCopies: Map<string, string>;
  }): { names: string[]; safeCopies: Set<string> };
  channel(): Promise<Channel>;
  /** The clock that tells a head timestamp from a future one; Date.now unless a test injects one. */
  now?: () => number;
}

function managementFailure(e: unknown, ctx: InspectContext): unknown {
  if (!(e instanceof ManagementError)) return e;
  const where = `the RabbitMQ management API of ${ctx.displayName}`;
  switch (e.kind) {
    case "unreachable":
      return new BrokerError("unreachable", {
        message: e.message,
        cause: e,
        userMessage: `${where} cannot be reached, so its DLQs and configuration cannot be checked. Check that the broker and its management plugin are running.`,
      });
    case "auth":
      return new BrokerError("auth", {
        message: e.message,
        cause: e,
        userMessage: `${where} refused the console's credentials. The checks need a user with the "management" tag and access to vhost "${ctx.vhost}".`,
      });
    case "not_found":
      return new BrokerError("auth", {
        message: e.message,
        cause: e,
        userMessage: `${where} does not know vhost "${ctx.vhost}". Check the vhost in the connection URL.`,
      });
    default:
      return new BrokerError("protocol", {
        message: e.message,
        cause: e,
        userMessage: `${where} answered unexpectedly. The error was logged.`,
      });
  }
}

export async function inspectRabbit(ctx: InspectContext, opts: InspectOptions): Promise<BrokerInspection> {
  if (!ctx.mgmt) return inspectWithoutManagement(ctx, opts);
  const mgmt = ctx.mgmt;
  let calls = 0;
  const call = <T>(f: () => Promise<T>) => {
    calls++;
    return f();
  };
  const o = { signal: opts.signal };
  let answers: BrokerAnswers;
  try {
    const [queues, exchanges, bindings, policies, version] = await Promise.all([
      call(() => mgmt.listQueues(ctx.vhost, o)),
      call(() => mgmt.listExchanges(ctx.vhost, o)),
      call(() => mgmt.listBindings(ctx.vhost, o)),
      call(() => mgmt.listPolicies(ctx.vhost, o)),
      // Asked every round: the management API has no connection that an upgrade would restart.
      call(() => mgmt.brokerVersion(o)),
    ]);
    answers = { queues, exchanges, bindings, policies, version };
  } catch (e) {
    throw managementFailure(e, ctx);
  }
  const { queues, bindings, exchanges } = answers;
  const { names } = ctx.dlqNames({
    queues: new Map(queues.map((q) => [q.name, q])),
    discovered: ctx.discover ? discoverDlqs(queues, bindings, exchanges) : new Map(),
    safeCopies: safeCopiesOf(queues),
  });
  return {
    ...inspectionFrom(answers, { vhost: ctx.vhost, names, configured: ctx.configured }, (ctx.now ?? Date.now)()),
    calls,
  };
}

/**
 * Without a management API only the configured DLQs can be seen, through a passive declare each
 * (the config's list, not the broker's queues, bounds the cost), and nothing can be checked: one
 * info finding says so, every round, so it never looks like a clean bill.
 */
async function inspectWithoutManagement(ctx: InspectContext, opts: InspectOptions): Promise<BrokerInspection> {
  const { names, safeCopies } = ctx.dlqNames({ queues: null, discovered: new Map(), safeCopies: new Map() });
  let calls = 0;
  const dlqs: DlqVitals[] = [];
  let ch: Channel | null = null;
  try {
    for (const name of names) {
      opts.signal?.throwIfAborted();
      const configuredType = ctx.configured.find((c) => c.name === name)?.queueType;
      if (!ch) {
        calls++;
        ch = await ctx.channel();
      }
      calls++;
      try {
        const ok = await ch.checkQueue(name);
        dlqs.push({
          name,
          queueType: configuredType ?? "unknown",
          depth: ok.messageCount,
          inFlight: null,
          enteredTotal: null,
          oldestAt: null,
          retentionMs: null,
          retentionClock: "arrival",
        });
      } catch (e) {
        const mapped = mapAmqpError(e, { endpoint: ctx.endpoint, queue: name });
        if (mapped.kind !== "not_found") throw mapped;
        // The broker closed the channel with the 404.
        await closeQuietly(ch);
        ch = null;
        if (!safeCopies.has(name)) dlqs.push(vitalsOf(name, undefined, configuredType, (ctx.now ?? Date.now)()));
      }
    }
  } finally {
    await closeQuietly(ch);
  }
  const finding: ConfigFinding = {
    code: "rabbitmq.management_unconfigured",
    severity: "info",
    object: `vhost ${ctx.vhost}`,
    dlq: null,
    why: `No management API is configured for ${ctx.displayName}: dead-letter exchanges, bindings, delivery limits and DLQ limits cannot be checked, discovered DLQs are not watched, and the oldest letter's age and the retention are unknown.`,
    fix: `Enable the rabbitmq_management plugin and set management.url (with management.usernameEnv and management.passwordEnv) on this connection in the console's config file; the user needs the "management" tag and access to vhost "${ctx.vhost}".`,
  };
  return { dlqs, findings: [finding], calls };
}
