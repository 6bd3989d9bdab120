import "server-only";
import type { Actor } from "@/lib/auth/session";
import type { BrokerKind } from "@/lib/brokers/contract/capabilities";
import { maskTextWithRules } from "@/lib/masking/engine";
import { maskingPolicy, type MaskingPolicy } from "@/lib/masking/policy";
import type { DlqOwnerInfo } from "@/lib/operations/owners";
import { ignoreRuleOf, isIssueState, type IssueState } from "@/lib/triage/issue-lifecycle";
import { maskGroup } from "@/lib/triage/use-cases";
import { linkHost } from "./inputs";
import type { IssueEventRow, IssueRow } from "./queries";

/**
 * What a role is shown of an issue. Titles go through the triage groups' own masking (maskGroup);
 * notes, links and resolve notes, typed by operators and stored as typed, through the same rules
 * of the reader's role on the issue's DLQ. Every text here is plain text for the pages to show as
 * text (never markup).
 */

export type IgnoreView =
  | { mode: "forever" }
  | { mode: "until_time"; until: string }
  | { mode: "until_count"; letters: number; untilCount: number; remaining: number };

export interface IssueView {
  connectionId: string;
  queue: string;
  groupKey: string;
  brokerKind: BrokerKind | null;
  /** The group's label, masked for the role (as on the groups page). */
  title: string;
  exceptionClass: string | null;
  normalizedMessage: string | null;
  state: IssueState;
  stateChangedAt: string;
  /** An e-mail, or "system" for the console's own changes. */
  stateChangedBy: string;
  resolvedAt: string | null;
  /** Masked for the role. */
  resolveNote: string | null;
  ignore: IgnoreView | null;
  assignee: { kind: "owner" | "user"; name: string } | null;
  /** The DLQ's owning team (operations owners), whoever the issue is assigned to. */
  owner: DlqOwnerInfo | null;
  /** Letters of the group ever indexed. */
  letters: number;
  /** Letters in the DLQ now. */
  present: number;
  /** Letters arrived in the last 24 hours. */
  growth: number;
  firstSeenAt: string;
  lastSeenAt: string;
}

export interface IssueEventView {
  id: string;
  kind: "state" | "note" | "link" | "assign";
  fromState: IssueState | null;
  toState: IssueState | null;
  /** state: why (masked); note: the note (masked); assign: "owner:<team>" / "user:<e-mail>" or null. */
  text: string | null;
  /** link only: the URL as text (masked) and its host. */
  link: { url: string; host: string | null } | null;
  actor: string | null;
  actorRole: string | null;
  at: string;
}

const iso = (d: Date | string) => new Date(d).toISOString();
const stateOf = (s: string | null): IssueState | null => (isIssueState(s) ? s : null);

/** The masking policy of each DLQ for one role, loaded once per DLQ of a request. */
export function policies(actor: Actor): (connectionId: string, queue: string) => Promise<MaskingPolicy> {
  const memo = new Map<string, Promise<MaskingPolicy>>();
  return (connectionId, queue) => {
    const key = JSON.stringify([connectionId, queue]);
    let p = memo.get(key);
    if (!p) {
      p = maskingPolicy(actor.role, connectionId, queue);
      memo.set(key, p);
    }
    return p;
  };
}

export function maskedText(t: string | null, policy: MaskingPolicy): string | null {
  if (t === null || policy.rules.length === 0) return t;
  return maskTextWithRules(t, policy.rules, policy.hashKey).text;
}

export function toIssueView(
  r: IssueRow,
  policy: MaskingPolicy,
  extra: { brokerKind: BrokerKind | null; owner: DlqOwnerInfo | null },
): IssueView {
  const title = maskGroup({ label: r.label, normalizedMessage: r.normalized_message }, policy);
  const rule = ignoreRuleOf({
    ignoreMode: r.ignore_mode,
    ignoreUntil: r.ignore_until,
    ignoreUntilCount: r.ignore_until_count,
    ignoreLetters: r.ignore_letters,
  });
  const letters = Number(r.letters);
  let ignore: IgnoreView | null = null;
  if (rule?.mode === "forever") ignore = { mode: "forever" };
  else if (rule?.mode === "until_time") ignore = { mode: "until_time", until: iso(rule.until) };
  else if (rule?.mode === "until_count")
    ignore = {
      mode: "until_count",
      letters: rule.letters,
      untilCount: rule.untilCount,
      remaining: Math.max(0, rule.untilCount - letters),
    };
  return {
    connectionId: r.connection_id,
    queue: r.queue,
    groupKey: r.group_key,
    brokerKind: extra.brokerKind,
    title: title.label,
    exceptionClass: r.exception_class,
    normalizedMessage: title.normalizedMessage,
    state: stateOf(r.state) ?? "new",
    stateChangedAt: iso(r.state_changed_at),
    stateChangedBy: r.state_changed_by,
    resolvedAt: r.resolved_at ? iso(r.resolved_at) : null,
    resolveNote: maskedText(r.resolve_note, policy),
    ignore,
    assignee:
      r.assignee && (r.assignee_kind === "owner" || r.assignee_kind === "user")
        ? { kind: r.assignee_kind, name: r.assignee }
        : null,
    owner: extra.owner,
    letters,
    present: Number(r.present),
    growth: Number(r.growth),
    firstSeenAt: iso(r.first_seen_at),
    lastSeenAt: iso(r.last_seen_at),
  };
}

export function toEventView(e: IssueEventRow, policy: MaskingPolicy): IssueEventView {
  const kind = (["state", "note", "link", "assign"] as const).find((k) => k === e.kind) ?? "note";
  let link: IssueEventView["link"] = null;
  let text = e.text;
  if (kind === "link") {
    const url = maskedText(e.text, policy) ?? "";
    // The host of the URL as the role sees it: masking never shows more through the host.
    link = { url, host: linkHost(url) };
    text = null;
  } else if (kind !== "assign") text = maskedText(e.text, policy);
  return {
    id: e.id,
    kind,
    fromState: stateOf(e.from_state),
    toState: stateOf(e.to_state),
    text,
    link,
    actor: e.actor_email,
    actorRole: e.actor_role,
    at: iso(e.at),
  };
}
