export type AuditOutcome = "success" | "denied" | "failure";
export const AUDIT_OUTCOMES: readonly AuditOutcome[] = ["success", "denied", "failure"];
export type AuditScope = "operation" | "letter";

export interface AuditActor {
  id: string | null;
  email: string | null;
  /** The role as it was when the entry was written: kept as text, so history outlives a renamed role. */
  role: string | null;
  /** The API token the actor came in with; recorded in the row's details (never the secret). */
  tokenId?: string | null;
}

/** The console itself, for what it does on its own (a worker's task): no user, no role. */
export const SYSTEM_ACTOR: AuditActor = { id: null, email: "system", role: null };

/**
 * One audit entry. `details` must never contain payload bytes or secrets: describe what was done
 * (ids, counts, filters), not the data. Strings in details longer than 2 KB are truncated.
 */
export interface AuditEntry {
  actor: AuditActor;
  action: string;
  outcome: AuditOutcome;
  connectionId?: string | null;
  queue?: string | null;
  target?: string | null;
  requestId?: string | null;
  ip?: string | null;
  details?: Record<string, unknown>;
  /** Shared by an operation's row and its per-letter rows; generated when omitted. */
  operationId?: string;
  scope?: AuditScope;
}

export interface AuditFilter {
  /** Actor email, case-insensitive substring. */
  actor?: string;
  /** Exact action, or a prefix when it ends with "." or "*" ("auth." or "auth.*"). */
  action?: string;
  /** One of these exact actions (an empty list matches nothing); served per action from the (action, id) index. */
  actions?: string[];
  queue?: string;
  connectionId?: string;
  outcome?: AuditOutcome;
  /** Inclusive bounds on `at`. */
  from?: Date;
  to?: Date;
}

export interface AuditRow {
  id: string;
  operationId: string;
  scope: string;
  /** ISO 8601, UTC, millisecond precision. */
  at: string;
  actorId: string | null;
  actorEmail: string | null;
  actorRole: string | null;
  action: string;
  outcome: AuditOutcome;
  connectionId: string | null;
  queue: string | null;
  target: string | null;
  requestId: string | null;
  ip: string | null;
  details: Record<string, unknown> | null;
  prevHash: string;
  hash: string;
  /** The audit key the row's MAC was made with; null on legacy rows (unkeyed sha256). */
  keyId: string | null;
}

/** What verifyAuditChain found (also what the Audit page's "Verify chain" shows). */
export interface AuditChainResult {
  ok: boolean;
  /** Rows whose link verified (up to the break, if any). */
  checked: number;
  /** Where and why the log fails; id is null when no single row is to blame (a cut end, an emptied table, a bad checkpoint). */
  brokenAt?: { id: string | null; reason: string };
  /** The checkpoint file, how many of its checkpoints of this database were held against the log, and whether this run added one. */
  checkpoints: { file: string; checked: number; written: boolean; writeError?: string };
  /** Rows from before the keyed chain (unkeyed sha256): verifiable, but only the keyed rows after them protect them. */
  legacyRows: number;
}
