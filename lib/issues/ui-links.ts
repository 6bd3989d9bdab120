/**
 * URLs of the failures pages (failure issues across DLQs): every view is reproducible from its
 * URL, and unknown values are an error to show, not silently dropped. Pure (client-safe).
 */
import type { BrokerKind } from "@/lib/brokers/contract/capabilities";
import { type SearchParams, firstParam, withQuery } from "@/lib/search-params";
import type { IssueState } from "@/lib/triage/issue-lifecycle";

const seg = encodeURIComponent;

/** The tabs of the failures page: which lifecycle states each shows. */
export const FAILURE_TABS = {
  attention: { label: "Needs attention", states: ["new", "regressed"] },
  open: { label: "Open", states: ["new", "regressed", "acknowledged"] },
  resolved: { label: "Resolved", states: ["resolved"] },
  ignored: { label: "Ignored", states: ["ignored"] },
  all: { label: "All", states: ["new", "regressed", "acknowledged", "resolved", "ignored"] },
} as const satisfies Record<string, { label: string; states: readonly IssueState[] }>;
export type FailureTab = keyof typeof FAILURE_TABS;
export const FAILURE_TAB_NAMES = Object.keys(FAILURE_TABS) as FailureTab[];

const BROKERS = ["rabbitmq", "sqs", "kafka", "pulsar"] as const satisfies readonly BrokerKind[];

export interface FailuresView {
  tab: FailureTab;
  /** A team or a user's e-mail the issues are assigned to, or "none". */
  assignee: string | null;
  /** The team owning the DLQ. */
  owner: string | null;
  broker: BrokerKind | null;
  connection: string | null;
  dlq: string | null;
}

export const EMPTY_FAILURES_VIEW: FailuresView = {
  tab: "open",
  assignee: null,
  owner: null,
  broker: null,
  connection: null,
  dlq: null,
};

export function failuresHref(v: Partial<FailuresView> = {}): string {
  const p = new URLSearchParams();
  if (v.tab && v.tab !== "open") p.set("tab", v.tab);
  for (const k of ["assignee", "owner", "broker", "connection", "dlq"] as const) {
    const value = v[k];
    if (value) p.set(k, value);
  }
  return withQuery("/failures", p);
}

/** The use cases' filter for a view. */
export function failuresFilter(v: FailuresView) {
  return {
    states: [...FAILURE_TABS[v.tab].states],
    ...(v.assignee ? { assignee: v.assignee } : {}),
    ...(v.owner ? { owner: v.owner } : {}),
    ...(v.broker ? { brokerKind: v.broker } : {}),
    ...(v.connection ? { connectionId: v.connection } : {}),
    ...(v.dlq ? { queue: v.dlq } : {}),
  };
}

export function parseFailuresParams(
  sp: SearchParams,
): { ok: true; value: FailuresView } | { ok: false; message: string } {
  const tab = firstParam(sp, "tab") || "open";
  if (!(FAILURE_TAB_NAMES as string[]).includes(tab))
    return { ok: false, message: `tab must be one of ${FAILURE_TAB_NAMES.join(", ")}.` };
  const broker = firstParam(sp, "broker") || null;
  if (broker !== null && !(BROKERS as readonly string[]).includes(broker))
    return { ok: false, message: `broker must be one of ${BROKERS.join(", ")}.` };
  const text = (k: string, max: number) => {
    const v = firstParam(sp, k).trim();
    return v ? (v.length > max ? undefined : v) : null;
  };
  const assignee = text("assignee", 320);
  const owner = text("owner", 100);
  const connection = text("connection", 100);
  const dlq = text("dlq", 255);
  if (assignee === undefined || owner === undefined || connection === undefined || dlq === undefined)
    return { ok: false, message: "A filter value is too long." };
  return {
    ok: true,
    value: { tab: tab as FailureTab, assignee, owner, broker: broker as BrokerKind | null, connection, dlq },
  };
}

/** One failure group's page. */
export function issueHref(ref: { connectionId: string; queue: string; groupKey: string }): string {
  return `/failures/${seg(ref.connectionId)}/${seg(ref.queue)}/${seg(ref.groupKey)}`;
}

export const STATE_LABELS: Record<IssueState, string> = {
  new: "new",
  acknowledged: "acknowledged",
  resolved: "resolved",
  regressed: "regressed",
  ignored: "ignored",
};
