import "server-only";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { truncate } from "@/lib/format";
import { listGroups } from "@/lib/triage/use-cases";

/**
 * The triage group a selection names (a group, or a filter on one), for the scope line of a redrive
 * or a discard: its label and its origin queues. Null when the selection names no group or the group
 * is no longer in the index.
 */
export async function selectedGroup(
  actor: Actor,
  meta: RequestMeta,
  dlq: { connectionId: string; queue: string },
  selection: unknown,
): Promise<{ label: string; origins: string[] } | null> {
  const s = selection as { kind?: string; groupKey?: string; filter?: { groupKey?: string } };
  const key = s.kind === "group" ? s.groupKey : s.kind === "filter" ? s.filter?.groupKey : undefined;
  if (!key) return null;
  const groups = await listGroups(actor, meta, { ...dlq, by: "group" });
  const g = groups.by === "group" ? groups.groups.find((x) => x.groupKey === key) : undefined;
  if (!g) return null;
  return {
    label: truncate(
      g.basis === "exception" ? [g.exceptionClass, g.normalizedMessage].filter(Boolean).join(": ") : g.label,
      120,
    ),
    origins: g.origins,
  };
}
