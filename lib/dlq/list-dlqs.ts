import "server-only";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { listAdapters } from "@/lib/brokers/registry";
import { toSafeError } from "./app-error";
import { connectionInfo, withTimeout } from "./connection";
import type { DlqListing } from "./types";

const LIST_TIMEOUT_MS = 8_000;

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
        return { ...info, status: "ok" as const, error: null, dlqs };
      } catch (e) {
        console.error(`listing DLQs of ${a.connectionId} failed`, e);
        return { ...info, status: "error" as const, error: toSafeError(e), dlqs: [] };
      }
    }),
  );
  return { connections, fetchedAt: new Date().toISOString() };
}
