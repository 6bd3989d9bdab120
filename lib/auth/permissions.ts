/**
 * The one place roles are defined. Every server action, route handler and job asks `can()`;
 * the UI may use it to hide controls, but hiding is never the check.
 */
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = {
  /** See connections, DLQs, depths and warnings. */
  "dlq:list": ["viewer", "operator", "admin"],
  /** Page through a DLQ's letters and their failure metadata (payloads excluded). */
  "dlq:browse": ["viewer", "operator", "admin"],
  /** Read a DLQ whose reading may cost letters (quorum queue with a delivery limit), after confirming. */
  "dlq:browse-risky": ["operator", "admin"],
  /** Move a risky DLQ's letters into a queue where reading them costs nothing, before anything reads them (conserving, audited). */
  "dlq:safe-move": ["operator", "admin"],
  /** See one letter's metadata and headers. */
  "letter:read": ["viewer", "operator", "admin"],
  /** See a letter's payload on its page, masked by the masking rules (viewers: never on sensitive DLQs). */
  "letter:view-payload": ["viewer", "operator", "admin"],
  /** Download and export payloads: the original bytes only where no masking rule applies to the role, else a masked rendition. */
  "letter:read-payload": ["operator", "admin"],
  /** See a payload and headers unmasked, for one page view, after giving a reason (audited `payload.reveal`). */
  "payload:reveal": ["admin"],
  /** Edit masking rules and mark DLQs sensitive. */
  "masking:manage": ["admin"],
  /** Read and export the audit history. */
  "audit:read": ["operator", "admin"],
  /** Verify the audit hash chain. */
  "audit:verify": ["admin"],
  /** See the triage index of a DLQ: scans, groups, filtered letters (payloads excluded). */
  "triage:read": ["viewer", "operator", "admin"],
  /** Start and cancel scans that read a DLQ into the triage index. */
  "triage:scan": ["operator", "admin"],
  /** Export a filtered set's metadata (payloads also need letter:read-payload). */
  "triage:export": ["viewer", "operator", "admin"],
  /**
   * Change a failure group's lifecycle (acknowledge, resolve, ignore), assign it, add notes and
   * links; reading it is triage:read.
   */
  "issues:write": ["operator", "admin"],
  /** Edit the classification rules (transient / permanent). */
  "triage:rules": ["admin"],
  /** See redrive jobs, their progress and ledgers (letter ids and outcomes, no payloads). */
  "redrive:read": ["viewer", "operator", "admin"],
  /** Plan and start a redrive (stage 1: the sample), pause, resume and cancel redrives. */
  "redrive:sample": ["operator", "admin"],
  /** Start stage 2 (the rest, at a rate) after a clean sample. */
  "redrive:bulk": ["operator", "admin"],
  /** Start stage 2 without a clean sample (letters came back, or the watch was cut short), with a reason. */
  "redrive:override": ["admin"],
  /** Plan, start and cancel discards: letters leave their DLQ for the archive, with a stated reason. */
  "discard:run": ["admin"],
  /** See discard jobs, their progress and ledgers (letter ids and outcomes, no payloads). */
  "discard:read": ["viewer", "operator", "admin"],
  /** List archived (discarded) letters and see one, payloads masked as on the letter page; export their metadata. */
  "archive:read": ["viewer", "operator", "admin"],
  /**
   * Repair and resubmit one letter: edit its payload or unlocked headers and send the copy on, the
   * original archived; only where the console config's `repair` switch covers the DLQ.
   */
  "letter:repair": ["admin"],
  /** Re-publish archived letters to their DLQ ("undo" a discard), with a reason. */
  "archive:restore": ["admin"],
  /** Create users, change roles, disable users. */
  "users:manage": ["admin"],
  /** See the operations overview: DLQ vitals over time, retention deadlines, owners, configuration findings, alert rules and their deliveries. */
  "ops:read": ["viewer", "operator", "admin"],
  /** Acknowledge a configuration finding (it stays listed until the fault is fixed). */
  "ops:acknowledge": ["operator", "admin"],
  /** Create, change and delete alert rules and DLQ owners; send a test message to a webhook. */
  "ops:manage": ["admin"],
  /** See a Kafka connection's consumer groups: members, committed and end offsets, lag, stuck partitions, and skips. */
  "groups:read": ["viewer", "operator", "admin"],
  /**
   * Move the records a consumer group is stuck on to a DLT (copied, confirmed) and set the group's
   * committed offset past them, with a reason; only while the group has no active members.
   */
  "groups:skip": ["admin"],
  /** Create, list and revoke one's own personal API tokens, each with a role no higher than one's own. */
  "tokens:own": ["viewer", "operator", "admin"],
  /** List and revoke every user's API tokens. */
  "tokens:manage": ["admin"],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof PERMISSIONS;

export function can(role: Role | null | undefined, permission: Permission): boolean {
  if (!role) return false;
  return (PERMISSIONS[permission] as readonly Role[]).includes(role);
}

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}
