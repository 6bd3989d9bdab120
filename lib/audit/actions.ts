/**
 * Known audit action names, each with the label the audit page shows. Actions are namespaced
 * `<area>.<verb>` so a filter on a prefix ("auth.", "letter.") selects an area.
 * Unknown names are still recorded (a label falls back to the name itself).
 */
export const AUDIT_ACTIONS = {
  "auth.sign_in": "Signed in",
  "auth.sign_in_failed": "Sign-in failed",
  "auth.sign_out": "Signed out",
  "auth.sign_in_limited": "Sign-in refused: too many attempts",
  "auth.sign_in_refused": "Single sign-on refused (no mapped role or unverified e-mail)",
  "user.provisioned": "User created or updated by single sign-on",
  "dlq.list": "Listed DLQs",
  "dlq.open": "Opened a DLQ",
  "dlq.read_risky_confirmed": "Confirmed a read that may drop letters",
  "letter.view": "Viewed a letter",
  "letter.payload_view": "Viewed a payload",
  "letter.payload_download": "Downloaded a payload",
  "payload.reveal": "Revealed an unmasked payload",
  "masking.view": "Viewed the masking rules",
  "masking.save": "Changed masking rules or sensitive DLQs",
  "audit.view": "Viewed the audit log",
  "audit.export": "Exported the audit log",
  "audit.verify": "Verified the audit chain",
  "user.list": "Listed users",
  "user.create": "Created a user",
  "user.update": "Updated a user",
  "user.set_password": "Changed a password",
  "redrive.plan": "Previewed a redrive",
  "redrive.start": "Started a redrive",
  "redrive.sample_verdict": "A redrive sample was watched",
  "redrive.bulk_start": "Started the rest of a redrive",
  "redrive.auto_pause": "A redrive paused itself",
  "redrive.auto_resume": "A redrive resumed itself (its broker answers again)",
  "redrive.leftovers_removed": "A resumed redrive removed DLQ copies of letters it had moved (their removal was lost with the broker connection)",
  "redrive.finished": "A redrive ended",
  "redrive.pause": "Paused a redrive",
  "redrive.resume": "Resumed a redrive",
  "redrive.cancel": "Cancelled a redrive",
  "letter.redrive": "Redrove a letter",
  "letter.park": "Parked a letter",
  "letter.redrive_returned": "A redriven letter came back",
  "letter.discard": "Discarded a letter",
  "discard.plan": "Previewed a discard",
  "discard.start": "Started a discard",
  "discard.cancel": "Cancelled a discard",
  "discard.run": "A discard job ran (checked its starter's permission)",
  "discard.finished": "A discard ended",
  "archive.list": "Listed archived letters",
  "archive.view": "Viewed an archived letter",
  "archive.export": "Exported archived letters",
  "archive.restore": "Re-published archived letters (undo a discard)",
  "letter.restore": "Re-published an archived letter",
  "archive.retention": "Deleted expired archived letters",
  "triage.scan_start": "Started a triage scan",
  "triage.scan_cancel": "Cancelled a triage scan",
  "triage.scan_finished": "A triage scan ended",
  "triage.export": "Exported triage letters",
  "triage.search": "Searched a sensitive DLQ's letters",
  "triage.rules_save": "Changed classification rules",
} as const satisfies Record<string, string>;

export type KnownAuditAction = keyof typeof AUDIT_ACTIONS;

export function auditActionLabel(action: string): string {
  return (AUDIT_ACTIONS as Record<string, string>)[action] ?? action;
}
