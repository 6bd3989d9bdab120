import "server-only";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { listAdapters } from "@/lib/connections/registry";
import { toActionError } from "@/lib/errors";
import { connectionInfo, withTimeout } from "@/lib/use-case/connection";
import type { DlqListing } from "./types";
import { processState } from "@/lib/process-state";

const LIST_TIMEOUT_MS = 8_000;

/** Last known state per connection, so a broker that stays down is logged once, not on every poll. */
const { lastState } = processState("dlq-list-states", () => ({ lastState: new Map<string, "ok" | "error">() }));

function noteState(connectionId: string, state: "ok" | "error", e?: unknown) {
  const before = lastState.get(connectionId);
  lastState.set(connectionId, state);
  if (state === "error" && before !== "error")
    console.error(`listing DLQs of ${connectionId} failed: ${(e as Error)?.message ?? String(e)}`);
  if (state === "ok" && before === "error") console.info(`listing DLQs of ${connectionId} works again`);
}

/**
 * Every connection's DLQs. A broker that is down yields an error entry for its connection; the
 * others still list. Not audited: the list page polls this every few seconds.
 */
export async function listDlqs(actor: Actor, meta: RequestMeta): Promise<DlqListing> {
  await authorize(actor, "dlq:list", { action: "dlq.list", meta });
  const adapters = listAdapters();
  const connections = await Promise.all(
    adapters.map(async (a) => {
      const info = connectionInfo(a);
      try {
        const dlqs = await withTimeout(a.listDlqs(), LIST_TIMEOUT_MS, `listDlqs(${a.connectionId})`);
        dlqs.sort((x, y) => x.name.localeCompare(y.name));
        noteState(a.connectionId, "ok");
        return { ...info, status: "ok" as const, error: null, dlqs };
      } catch (e) {
        noteState(a.connectionId, "error", e);
        return { ...info, status: "error" as const, error: toActionError(e), dlqs: [] };
      }
    }),
  );
  return { connections, fetchedAt: new Date().toISOString() };
}
