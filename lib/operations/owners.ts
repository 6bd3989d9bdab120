import "server-only";
import { loadConfig, type OwnerConfig } from "@/lib/config";
import { getDb } from "@/lib/db";
import { globMatch } from "@/lib/glob";

export interface DlqOwnerInfo {
  team: string;
  contact: string;
  /** "console": set by an admin on the owners page; "config": the config file's `owners`. */
  source: "console" | "config";
}

export type OwnerOf = (connectionId: string, queue: string) => DlqOwnerInfo | null;

interface OwnerEntry {
  connection: string | null;
  queue: string;
  team: string;
  contact: string;
  source: DlqOwnerInfo["source"];
}

/** The first matching entry wins: the console's rows by position, then the config file in order. */
export function ownerMatcher(entries: OwnerEntry[]): OwnerOf {
  return (connectionId, queue) => {
    const hit = entries.find(
      (e) => (e.connection === null || globMatch(e.connection, connectionId)) && globMatch(e.queue, queue),
    );
    return hit ? { team: hit.team, contact: hit.contact, source: hit.source } : null;
  };
}

export function configOwnerEntries(owners: OwnerConfig[]): OwnerEntry[] {
  return owners.map((o) => ({
    connection: o.connection ?? null,
    queue: o.queue,
    team: o.team,
    contact: o.contact,
    source: "config" as const,
  }));
}

/** Loads the owner map once (one query); use the returned function for every DLQ of a request or round. */
export async function ownerResolver(): Promise<OwnerOf> {
  const rows = await getDb().dlqOwner.findMany({ orderBy: [{ position: "asc" }, { createdAt: "asc" }] });
  return ownerMatcher([
    ...rows.map((r) => ({
      connection: r.connectionPattern,
      queue: r.queuePattern,
      team: r.team,
      contact: r.contact,
      source: "console" as const,
    })),
    ...configOwnerEntries(loadConfig().owners),
  ]);
}
