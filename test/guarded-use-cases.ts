import "server-only";
import type { Permission } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import {
  cancelRedrive,
  pauseRedrive,
  planRedrive,
  resumeRedrive,
  startBulk,
  startRedrive,
} from "@/lib/redrive/use-cases";
import { cancelScan, exportLetters, saveRules, startScan } from "@/lib/triage/use-cases";
import { createUserAsAdmin, updateUserAsAdmin } from "@/lib/users-admin";
import { saveMaskingRules, viewMaskingConfig } from "@/lib/masking/use-cases";
import { exportAudit, verifyAudit, viewAudit } from "@/lib/audit-log/use-cases";
import { downloadPayload } from "@/lib/dlq/download-payload";
import { revealPayload } from "@/lib/dlq/reveal-payload";
import { startSafeMove } from "@/lib/safety/use-cases";
import { readRiskyOnce } from "@/lib/dlq/risky-read";
import { acknowledgeFinding, acknowledgeFindingKind, deleteOwner, saveOwner } from "@/lib/operations/use-cases";
import { createAlertRule, deleteAlertRule, sendTestAlert, updateAlertRule } from "@/lib/alerts/use-cases";
import { listAllTokens, revokeAnyToken } from "@/lib/api-tokens";
import { repairLetter } from "@/lib/repair/use-cases";
import { cancelSkip, planSkip, startSkip } from "@/lib/consumer-groups/skip";
import { addIssueLink, addIssueNote, assignIssue, changeIssueState, changeIssueStates } from "@/lib/issues/use-cases";

export interface GuardedUseCase {
  name: string;
  /** The permission the use case checks first; the audit action a refusal is recorded under. */
  permission: Permission;
  action: string;
  /** Invokes the use case with a minimal valid input. */
  invoke: (actor: Actor, meta: RequestMeta) => Promise<unknown>;
}

const DEMO = { connectionId: "local-rabbitmq", queue: "demo.orders.dlq" };
const NO_JOB = "00000000-0000-0000-0000-000000000000";

/** Every use case that changes state. Tests walk this list as a viewer: each must be refused and audited. */
const ISSUE = { ...DEMO, groupKey: "any-group" };

export const MUTATING_USE_CASES: GuardedUseCase[] = [
  {
    name: "changeIssueState",
    permission: "issues:write",
    action: "issue.state_change",
    invoke: (a, m) => changeIssueState(a, m, { ...ISSUE, change: { state: "acknowledged" } }),
  },
  {
    name: "changeIssueStates",
    permission: "issues:write",
    action: "issue.state_change_bulk",
    invoke: (a, m) => changeIssueStates(a, m, { filter: { queue: DEMO.queue }, change: { state: "acknowledged" } }),
  },
  {
    name: "assignIssue",
    permission: "issues:write",
    action: "issue.assign",
    invoke: (a, m) => assignIssue(a, m, { ...ISSUE, assignee: null }),
  },
  {
    name: "addIssueNote",
    permission: "issues:write",
    action: "issue.note",
    invoke: (a, m) => addIssueNote(a, m, { ...ISSUE, text: "a note" }),
  },
  {
    name: "addIssueLink",
    permission: "issues:write",
    action: "issue.link",
    invoke: (a, m) => addIssueLink(a, m, { ...ISSUE, url: "https://example.com/" }),
  },
  {
    name: "readRiskyOnce",
    permission: "dlq:browse-risky",
    action: "dlq.read_risky_confirmed",
    invoke: (a, m) => readRiskyOnce(a, m, DEMO),
  },
  {
    name: "startSafeMove",
    permission: "dlq:safe-move",
    action: "dlq.safe_move_start",
    invoke: (a, m) => startSafeMove(a, m, { ...DEMO, target: `${DEMO.queue}.safe` }),
  },
  {
    name: "createUserAsAdmin",
    permission: "users:manage",
    action: "user.create",
    invoke: (a, m) =>
      createUserAsAdmin(a, m, { email: "refused@example.test", role: "viewer", password: "long-enough-password" }),
  },
  {
    name: "updateUserAsAdmin",
    permission: "users:manage",
    action: "user.update",
    invoke: (a, m) => updateUserAsAdmin(a, m, { id: "some-user-id", role: "admin" }),
  },
  {
    name: "startScan",
    permission: "triage:scan",
    action: "triage.scan_start",
    invoke: (a, m) => startScan(a, m, DEMO),
  },
  {
    name: "repairLetter",
    permission: "letter:repair",
    action: "letter.repair",
    invoke: (a, m) =>
      repairLetter(a, m, { ...DEMO, letterId: "m-bWF0cml4", setHeaders: { "x-note": "1" }, reason: "Fixing a typo" }),
  },
  {
    name: "cancelScan",
    permission: "triage:scan",
    action: "triage.scan_cancel",
    invoke: (a, m) => cancelScan(a, m, { jobId: "00000000-0000-0000-0000-000000000000" }),
  },
  {
    name: "saveRules",
    permission: "triage:rules",
    action: "triage.rules_save",
    invoke: (a, m) => saveRules(a, m, { rules: [] }),
  },
  {
    name: "planRedrive",
    permission: "redrive:sample",
    action: "redrive.plan",
    invoke: (a, m) => planRedrive(a, m, { ...DEMO, selection: { kind: "filter", filter: {} } }),
  },
  {
    name: "startRedrive",
    permission: "redrive:sample",
    action: "redrive.start",
    invoke: (a, m) =>
      startRedrive(a, m, {
        ...DEMO,
        selection: { kind: "filter", filter: {} },
        fix: "Deployed the fix",
        confirmedCount: 1,
      }),
  },
  {
    name: "startBulk",
    permission: "redrive:bulk",
    action: "redrive.bulk_start",
    invoke: (a, m) => startBulk(a, m, { jobId: NO_JOB }),
  },
  {
    name: "startBulk without a clean sample",
    permission: "redrive:override",
    action: "redrive.bulk_start",
    invoke: (a, m) => startBulk(a, m, { jobId: NO_JOB, overrideReason: "The returns were a known flaky consumer" }),
  },
  {
    name: "pauseRedrive",
    permission: "redrive:sample",
    action: "redrive.pause",
    invoke: (a, m) => pauseRedrive(a, m, { jobId: NO_JOB }),
  },
  {
    name: "resumeRedrive",
    permission: "redrive:sample",
    action: "redrive.resume",
    invoke: (a, m) => resumeRedrive(a, m, { jobId: NO_JOB }),
  },
  {
    name: "cancelRedrive",
    permission: "redrive:sample",
    action: "redrive.cancel",
    invoke: (a, m) => cancelRedrive(a, m, { jobId: NO_JOB }),
  },
  {
    name: "saveMaskingRules",
    permission: "masking:manage",
    action: "masking.save",
    invoke: (a, m) => saveMaskingRules(a, m, { rules: [], sensitive: [] }),
  },
  {
    name: "acknowledgeFinding",
    permission: "ops:acknowledge",
    action: "finding.acknowledge",
    invoke: (a, m) => acknowledgeFinding(a, m, { id: NO_JOB }),
  },
  {
    name: "acknowledgeFindingKind",
    permission: "ops:acknowledge",
    action: "finding.acknowledge_all",
    invoke: (a, m) => acknowledgeFindingKind(a, m, { code: "no.such_kind" }),
  },
  {
    name: "saveOwner",
    permission: "ops:manage",
    action: "owner.save",
    invoke: (a, m) => saveOwner(a, m, { position: 0, queuePattern: "refused.*", team: "Refused", contact: "#refused" }),
  },
  {
    name: "deleteOwner",
    permission: "ops:manage",
    action: "owner.delete",
    invoke: (a, m) => deleteOwner(a, m, { id: NO_JOB }),
  },
  {
    name: "createAlertRule",
    permission: "ops:manage",
    action: "alert.rule_create",
    invoke: (a, m) =>
      createAlertRule(a, m, {
        name: "refused",
        kind: "depth_above",
        params: { depth: 1 },
        webhookUrl: "https://hooks.example.test/x",
      }),
  },
  {
    name: "updateAlertRule",
    permission: "ops:manage",
    action: "alert.rule_update",
    invoke: (a, m) => updateAlertRule(a, m, { id: NO_JOB, name: "refused", kind: "depth_above", params: { depth: 1 } }),
  },
  {
    name: "deleteAlertRule",
    permission: "ops:manage",
    action: "alert.rule_delete",
    invoke: (a, m) => deleteAlertRule(a, m, { id: NO_JOB }),
  },
  {
    name: "sendTestAlert",
    permission: "ops:manage",
    action: "alert.test_send",
    invoke: (a, m) => sendTestAlert(a, m, { id: NO_JOB }),
  },
  {
    name: "planSkip",
    permission: "groups:skip",
    action: "group.skip_plan",
    invoke: (a, m) =>
      planSkip(a, m, { connectionId: "local-kafka", groupId: "refused-app", topic: "refused", partition: 0 }),
  },
  {
    name: "startSkip",
    permission: "groups:skip",
    action: "group.skip",
    invoke: (a, m) =>
      startSkip(a, m, {
        connectionId: "local-kafka",
        groupId: "refused-app",
        topic: "refused",
        partition: 0,
        expectedCommitted: "0",
        upToOffset: "0",
        confirmedCount: 1,
        reason: "poison record",
        waitForEmpty: false,
      }),
  },
  {
    name: "cancelSkip",
    permission: "groups:skip",
    action: "group.skip_cancel",
    invoke: (a, m) => cancelSkip(a, m, { jobId: NO_JOB }),
  },
  // createToken and revokeMyToken are not here: every role may create and revoke its own tokens (tokens:own).
  {
    name: "revokeAnyToken",
    permission: "tokens:manage",
    action: "token.revoke",
    invoke: (a, m) => revokeAnyToken(a, m, { id: NO_JOB }),
  },
];

/** Reads that some roles may not make (payload bytes, audit history): refused and audited the same way. */
export const GUARDED_READS: GuardedUseCase[] = [
  {
    name: "downloadPayload",
    permission: "letter:read-payload",
    action: "letter.payload_download",
    invoke: (a, m) => downloadPayload(a, m, { ...DEMO, letterId: "any-letter" }),
  },
  {
    name: "viewAudit",
    permission: "audit:read",
    action: "audit.view",
    invoke: (a, m) => viewAudit(a, m, { filter: {} }),
  },
  {
    name: "exportAudit",
    permission: "audit:read",
    action: "audit.export",
    invoke: (a, m) => exportAudit(a, m, { filter: {}, format: "csv" }),
  },
  {
    name: "exportLetters with payloads",
    permission: "letter:read-payload",
    action: "triage.export",
    invoke: (a, m) => exportLetters(a, m, { filter: DEMO, format: "json", includePayload: true }),
  },
  { name: "verifyAudit", permission: "audit:verify", action: "audit.verify", invoke: (a, m) => verifyAudit(a, m) },
  {
    name: "revealPayload",
    permission: "payload:reveal",
    action: "payload.reveal",
    invoke: (a, m) =>
      revealPayload(a, m, { ...DEMO, letterId: "any-letter", reason: "Checking the card number format" }),
  },
  {
    name: "viewMaskingConfig",
    permission: "masking:manage",
    action: "masking.view",
    invoke: (a, m) => viewMaskingConfig(a, m),
  },
  {
    name: "listAllTokens",
    permission: "tokens:manage",
    action: "token.list_all",
    invoke: (a, m) => listAllTokens(a, m),
  },
];
