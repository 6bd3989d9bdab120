/**
 * The authorization matrix: every route handler (app/**\/route.ts, each exported HTTP method), every
 * server action (each export of a "use server" file) and every page (app/**\/page.tsx), with the
 * roles that may use it. It is the specification the tests hold the code to, written out by hand on
 * purpose (not derived from lib/auth/permissions.ts), so that a change to the permissions table or
 * to a handler shows up as a failing row that someone has to look at.
 *
 * Read by lib/auth/matrix.integration.test.ts (handlers and actions called directly, real sessions,
 * real Postgres) and e2e/authorization.spec.ts (raw HTTP against the production server, pages).
 * Both discover the targets by scanning the source and fail when one has no row here: a route,
 * action or page added later breaks them until its row is written.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { HOSTILE_DLQS } from "@/lib/demo/hostile-corpus";
import { KAFKA_STUCK_DEMO } from "@/lib/demo/stuck-group";
import { ADMINS, EVERYONE, NONE, NO_JOB, OPERATORS, q, route, type Guard, type RouteRow } from "./matrix-kit";
import { TOKEN_MATRIX } from "./token-matrix";

export {
  ADMINS,
  EVERYONE,
  MATRIX_ROLES,
  NONE,
  NO_JOB,
  OPERATORS,
  type Guard,
  type Role,
  type RouteRow,
} from "./matrix-kit";
export { TOKEN_MATRIX } from "./token-matrix";

const ROOT = path.resolve(__dirname, "..");

const DLQ = `/dlqs/${q(NONE.connectionId)}/${q(NONE.queue)}`;
/** A failure group nobody has: its page answers 404 to a role that may read it. */
const NO_ISSUE = { connectionId: NONE.connectionId, queue: NONE.queue, groupKey: "e2e-no-such-group" };
/** Pages are opened on a seeded DLQ (scripts/seed-demo.ts), so an allowed role sees real content. */
const SEEDED = `/dlqs/${q(HOSTILE_DLQS.rabbitmq.connectionId)}/${q(HOSTILE_DLQS.rabbitmq.dlq)}`;

export interface ActionRow extends Guard {
  kind: "action";
  /** Path of the "use server" file under app/ (or elsewhere, relative to the repository). */
  file: string;
  name: string;
  args: unknown[];
}

export interface PageRow extends Guard {
  kind: "page";
  file: string;
  /** A concrete URL for the page. */
  url: string;
  /** What a refused role sees: an element with this test id (the page answers HTTP 403, without the data). */
  deniedTestId?: string;
}

export type MatrixRow = RouteRow | ActionRow | PageRow;

export function rowKey(r: MatrixRow): string {
  const base =
    r.kind === "route"
      ? `${r.method} app/${r.file}`
      : r.kind === "action"
        ? `action ${r.file}#${r.name}`
        : `page app/${r.file}`;
  return r.variant ? `${base} (${r.variant})` : base;
}

const action = (file: string, name: string, args: unknown[], g: Guard, variant?: string): ActionRow => ({
  kind: "action",
  file,
  name,
  args,
  ...g,
  variant,
});
const page = (file: string, url: string, g: Guard, deniedTestId?: string): PageRow => ({
  kind: "page",
  file,
  url,
  ...g,
  deniedTestId,
});

const REDRIVE = "dlqs/[connectionId]/[queue]/redrive/actions.ts";
const TRIAGE = "dlqs/[connectionId]/[queue]/triage/actions.ts";
const DISCARD = "dlqs/[connectionId]/[queue]/discard/actions.ts";
const REPAIR = "dlqs/[connectionId]/[queue]/letters/[letterId]/repair/actions.ts";
const GROUP_REPAIR = "dlqs/[connectionId]/[queue]/repair/actions.ts";
const GROUP_SKIP = "groups/[connectionId]/[groupId]/[topic]/[partition]/actions.ts";
/** The demo seed's consumer group stuck behind a poison record (lib/demo/kafka.ts KAFKA_STUCK_DEMO). */
const STUCK_GROUP = `/groups/local-kafka/${q(KAFKA_STUCK_DEMO.group)}`;
const app = (f: string) => `app/${f}`;

export const MATRIX: MatrixRow[] = [
  // ---- route handlers
  route("api/archive/export/route.ts", "GET", "/api/archive/export?format=json&queue=matrix.none.dlq", {
    roles: EVERYONE,
    permission: "archive:read",
    audit: "archive.export",
  }),
  route(
    "api/archive/export/route.ts",
    "GET",
    "/api/archive/export?format=json&payload=1&queue=matrix.none.dlq",
    { roles: OPERATORS, permission: "letter:read-payload", audit: "archive.export" },
    { variant: "with payloads" },
  ),
  route("api/audit/export/route.ts", "GET", "/api/audit/export?format=json", {
    roles: OPERATORS,
    permission: "audit:read",
    audit: "audit.export",
  }),
  route(
    "api/auth/[...nextauth]/route.ts",
    "GET",
    "/api/auth/csrf",
    { roles: EVERYONE, public: true },
    { params: { nextauth: ["csrf"] } },
  ),
  route(
    "api/auth/[...nextauth]/route.ts",
    "POST",
    "/api/auth/signin/credentials",
    { roles: EVERYONE, public: true },
    { params: { nextauth: ["signin", "credentials"] }, body: "" },
  ),
  route(
    "api/auth/csp-report/route.ts",
    "POST",
    "/api/auth/csp-report",
    { roles: EVERYONE, public: true },
    { body: { "csp-report": { "effective-directive": "script-src", "blocked-uri": "inline" } } },
  ),
  route(
    "api/dlqs/[connectionId]/[queue]/letters/[letterId]/payload/route.ts",
    "GET",
    `/api${DLQ}/letters/m-bWF0cml4/payload`,
    { roles: OPERATORS, permission: "letter:read-payload", audit: "letter.payload_download" },
    { params: { ...NONE, letterId: "m-bWF0cml4" } },
  ),
  route(
    "api/discard/[id]/cancel/route.ts",
    "POST",
    `/api/discard/${NO_JOB}/cancel`,
    { roles: ADMINS, permission: "discard:run", audit: "discard.cancel" },
    { params: { id: NO_JOB }, body: {} },
  ),
  route(
    "api/discard/[id]/route.ts",
    "GET",
    `/api/discard/${NO_JOB}`,
    { roles: EVERYONE, permission: "discard:read", audit: "discard.view" },
    { params: { id: NO_JOB } },
  ),
  route("api/dlqs/route.ts", "GET", "/api/dlqs", { roles: EVERYONE, permission: "dlq:list", audit: "dlq.list" }),
  route(
    "api/groups/skips/[id]/route.ts",
    "GET",
    `/api/groups/skips/${NO_JOB}`,
    { roles: EVERYONE, permission: "groups:read", audit: "group.skip_view" },
    { params: { id: NO_JOB } },
  ),
  // Liveness: answers without a session and reads nothing (lib/operations/health.integration.test.ts).
  route("api/health/route.ts", "GET", "/api/health", { roles: EVERYONE, public: true }),
  route(
    "api/operations/dlq/route.ts",
    "GET",
    `/api/operations/dlq?connectionId=${q(NONE.connectionId)}&queue=${q(NONE.queue)}&range=hour`,
    { roles: EVERYONE, permission: "ops:read", audit: "ops.dlq" },
  ),
  route("api/operations/overview/route.ts", "GET", "/api/operations/overview", {
    roles: EVERYONE,
    permission: "ops:read",
    audit: "ops.overview",
  }),
  // Also open to a scraper with DLQ_METRICS_TOKEN or from DLQ_METRICS_ALLOW (both unset here; lib/operations/metrics-route.integration.test.ts);
  // otherwise a session with ops:read, and no session is 401 with no figures.
  route("api/metrics/route.ts", "GET", "/api/metrics", {
    roles: EVERYONE,
    permission: "ops:read",
    audit: "ops.metrics",
  }),
  // Readiness: answers without a session, codes only (503 only when the database does not answer).
  route("api/ready/route.ts", "GET", "/api/ready", { roles: EVERYONE, public: true }),
  route(
    "api/redrive/[id]/bulk/route.ts",
    "POST",
    `/api/redrive/${NO_JOB}/bulk`,
    { roles: OPERATORS, permission: "redrive:bulk", audit: "redrive.bulk_start" },
    { params: { id: NO_JOB }, body: {} },
  ),
  route(
    "api/redrive/[id]/bulk/route.ts",
    "POST",
    `/api/redrive/${NO_JOB}/bulk`,
    { roles: ADMINS, permission: "redrive:override", audit: "redrive.bulk_start" },
    {
      params: { id: NO_JOB },
      body: { overrideReason: "The returns were a known flaky consumer" },
      variant: "override without a clean sample",
    },
  ),
  route(
    "api/redrive/[id]/cancel/route.ts",
    "POST",
    `/api/redrive/${NO_JOB}/cancel`,
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.cancel" },
    { params: { id: NO_JOB }, body: {} },
  ),
  route(
    "api/redrive/[id]/pause/route.ts",
    "POST",
    `/api/redrive/${NO_JOB}/pause`,
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.pause" },
    { params: { id: NO_JOB }, body: {} },
  ),
  route(
    "api/redrive/[id]/resume/route.ts",
    "POST",
    `/api/redrive/${NO_JOB}/resume`,
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.resume" },
    { params: { id: NO_JOB }, body: {} },
  ),
  route(
    "api/redrive/[id]/route.ts",
    "GET",
    `/api/redrive/${NO_JOB}`,
    { roles: EVERYONE, permission: "redrive:read", audit: "redrive.view" },
    { params: { id: NO_JOB } },
  ),
  route(
    "api/redrive/plan/route.ts",
    "POST",
    "/api/redrive/plan",
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.plan" },
    { body: {} },
  ),
  route("api/redrive/route.ts", "GET", `/api/redrive?connectionId=${q(NONE.connectionId)}&queue=${q(NONE.queue)}`, {
    roles: EVERYONE,
    permission: "redrive:read",
    audit: "redrive.list",
  }),
  route(
    "api/redrive/route.ts",
    "POST",
    "/api/redrive",
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.start" },
    { body: {} },
  ),
  route(
    "api/triage/export/route.ts",
    "GET",
    `/api/triage/export?format=json&connectionId=${q(NONE.connectionId)}&queue=${q(NONE.queue)}`,
    { roles: EVERYONE, permission: "triage:export", audit: "triage.export" },
  ),
  route(
    "api/triage/export/route.ts",
    "GET",
    `/api/triage/export?format=json&payload=1&connectionId=${q(NONE.connectionId)}&queue=${q(NONE.queue)}`,
    { roles: OPERATORS, permission: "letter:read-payload", audit: "triage.export" },
    { variant: "with payloads" },
  ),
  route(
    "api/triage/groups/route.ts",
    "GET",
    `/api/triage/groups?connectionId=${q(NONE.connectionId)}&queue=${q(NONE.queue)}`,
    { roles: EVERYONE, permission: "triage:read", audit: "triage.groups" },
  ),
  route(
    "api/triage/letters/route.ts",
    "GET",
    `/api/triage/letters?connectionId=${q(NONE.connectionId)}&queue=${q(NONE.queue)}`,
    { roles: EVERYONE, permission: "triage:read", audit: "triage.letters" },
  ),
  route("api/triage/rules/route.ts", "GET", "/api/triage/rules", {
    roles: EVERYONE,
    permission: "triage:read",
    audit: "triage.rules_view",
  }),
  // An empty rule list with a stale version: allowed callers get a conflict, nothing is saved.
  route(
    "api/triage/rules/route.ts",
    "POST",
    "/api/triage/rules",
    { roles: ADMINS, permission: "triage:rules", audit: "triage.rules_save" },
    { body: { rules: "not a list" } },
  ),
  route(
    "api/triage/scans/[id]/cancel/route.ts",
    "POST",
    `/api/triage/scans/${NO_JOB}/cancel`,
    { roles: OPERATORS, permission: "triage:scan", audit: "triage.scan_cancel" },
    { params: { id: NO_JOB }, body: {} },
  ),
  route(
    "api/triage/scans/[id]/route.ts",
    "GET",
    `/api/triage/scans/${NO_JOB}`,
    { roles: EVERYONE, permission: "triage:read", audit: "triage.scan_view" },
    { params: { id: NO_JOB } },
  ),
  route(
    "api/triage/scans/route.ts",
    "GET",
    `/api/triage/scans?connectionId=${q(NONE.connectionId)}&queue=${q(NONE.queue)}`,
    { roles: EVERYONE, permission: "triage:read", audit: "triage.scan_list" },
  ),
  route(
    "api/triage/scans/route.ts",
    "POST",
    "/api/triage/scans",
    { roles: OPERATORS, permission: "triage:scan", audit: "triage.scan_start" },
    { body: { connectionId: "", queue: "" } },
  ),

  // ---- server actions (inputs that an allowed caller gets refused for by validation or "not found": nothing changes)
  action(
    app("admin/masking/actions.ts"),
    "saveMaskingRulesAction",
    [{ rules: [], sensitive: [], expectedVersion: 999_999 }],
    { roles: ADMINS, permission: "masking:manage", audit: "masking.save" },
  ),
  action(app("admin/triage-rules/actions.ts"), "saveRulesAction", [{ rules: [], expectedVersion: 999_999 }], {
    roles: ADMINS,
    permission: "triage:rules",
    audit: "triage.rules_save",
  }),
  // An empty name / no such token: allowed callers get a validation error or "not found", nothing is created or revoked.
  action(app("admin/tokens/actions.ts"), "revokeAnyTokenAction", [{ id: NO_JOB }], {
    roles: ADMINS,
    permission: "tokens:manage",
    audit: "token.revoke",
  }),
  action(app("profile/actions.ts"), "createTokenAction", [{ name: "", role: "viewer", expiresInDays: 30 }], {
    roles: EVERYONE,
    permission: "tokens:own",
    audit: "token.create",
  }),
  action(app("profile/actions.ts"), "revokeMyTokenAction", [{ id: NO_JOB }], {
    roles: EVERYONE,
    permission: "tokens:own",
    audit: "token.revoke",
  }),
  action(app("admin/users/actions.ts"), "createUserAction", [{ email: "not an email", role: "admin", password: "x" }], {
    roles: ADMINS,
    permission: "users:manage",
    audit: "user.create",
  }),
  action(app("admin/users/actions.ts"), "updateUserAction", [{ id: NO_JOB, role: "admin" }], {
    roles: ADMINS,
    permission: "users:manage",
    audit: "user.update",
  }),
  action(app("archive/actions.ts"), "restoreArchivedAction", [{ ids: [], reason: "Discarded by mistake" }], {
    roles: ADMINS,
    permission: "archive:restore",
    audit: "archive.restore",
  }),
  action(app("audit/actions.ts"), "verifyAuditAction", [], {
    roles: ADMINS,
    permission: "audit:verify",
    audit: "audit.verify",
  }),
  action(app("dlqs/[connectionId]/[queue]/actions.ts"), "confirmRiskyReadAction", [{ ...NONE }], {
    roles: OPERATORS,
    permission: "dlq:browse-risky",
    audit: "dlq.read_risky_confirmed",
  }),
  action(
    app("dlqs/[connectionId]/[queue]/actions.ts"),
    "startSafeMoveAction",
    [{ ...NONE, target: `${NONE.queue}.safe` }],
    { roles: OPERATORS, permission: "dlq:safe-move", audit: "dlq.safe_move_start" },
  ),
  action(
    app("dlqs/[connectionId]/[queue]/letters/[letterId]/actions.ts"),
    "revealPayloadAction",
    [{ ...NONE, letterId: "m-bWF0cml4", reason: "Checking the card number format" }],
    { roles: ADMINS, permission: "payload:reveal", audit: "payload.reveal" },
  ),
  // No DLQ named: an admin gets the use case's validation error before the switch is looked at; nothing is read or sent.
  action(app(REPAIR), "planRepairAction", [{}], {
    roles: ADMINS,
    permission: "letter:repair",
    audit: "letter.repair_plan",
  }),
  action(app(REPAIR), "repairLetterAction", [{}], {
    roles: ADMINS,
    permission: "letter:repair",
    audit: "letter.repair",
  }),
  // Group repair: no DLQ named, so an admin gets a validation error (preview) or "needs the patch" (start); nothing is read or started.
  // The start is a redrive (audited redrive.start) that asks letter:repair before anything else.
  action(app(GROUP_REPAIR), "previewGroupRepairAction", [{}], {
    roles: ADMINS,
    permission: "letter:repair",
    audit: "redrive.repair_preview",
  }),
  action(app(GROUP_REPAIR), "startGroupRepairAction", [{}], {
    roles: ADMINS,
    permission: "letter:repair",
    audit: "redrive.start",
  }),
  action(app(GROUP_SKIP), "planSkipAction", [{}], {
    roles: ADMINS,
    permission: "groups:skip",
    audit: "group.skip_plan",
  }),
  action(app(GROUP_SKIP), "startSkipAction", [{}], { roles: ADMINS, permission: "groups:skip", audit: "group.skip" }),
  action(app(GROUP_SKIP), "cancelSkipAction", [{ jobId: NO_JOB }], {
    roles: ADMINS,
    permission: "groups:skip",
    audit: "group.skip_cancel",
  }),
  action(app(DISCARD), "planDiscardAction", [{}], { roles: ADMINS, permission: "discard:run", audit: "discard.plan" }),
  action(app(DISCARD), "startDiscardAction", [{}], {
    roles: ADMINS,
    permission: "discard:run",
    audit: "discard.start",
  }),
  action(app(DISCARD), "cancelDiscardAction", [{ jobId: NO_JOB }], {
    roles: ADMINS,
    permission: "discard:run",
    audit: "discard.cancel",
  }),
  action(app(REDRIVE), "planRedriveAction", [{}], {
    roles: OPERATORS,
    permission: "redrive:sample",
    audit: "redrive.plan",
  }),
  action(app(REDRIVE), "startRedriveAction", [{}], {
    roles: OPERATORS,
    permission: "redrive:sample",
    audit: "redrive.start",
  }),
  action(app(REDRIVE), "startBulkAction", [{ jobId: NO_JOB }], {
    roles: OPERATORS,
    permission: "redrive:bulk",
    audit: "redrive.bulk_start",
  }),
  action(
    app(REDRIVE),
    "startBulkAction",
    [{ jobId: NO_JOB, overrideReason: "The returns were a known flaky consumer" }],
    { roles: ADMINS, permission: "redrive:override", audit: "redrive.bulk_start" },
    "override without a clean sample",
  ),
  action(app(REDRIVE), "pauseRedriveAction", [{ jobId: NO_JOB }], {
    roles: OPERATORS,
    permission: "redrive:sample",
    audit: "redrive.pause",
  }),
  action(app(REDRIVE), "resumeRedriveAction", [{ jobId: NO_JOB }], {
    roles: OPERATORS,
    permission: "redrive:sample",
    audit: "redrive.resume",
  }),
  action(app(REDRIVE), "cancelRedriveAction", [{ jobId: NO_JOB }], {
    roles: OPERATORS,
    permission: "redrive:sample",
    audit: "redrive.cancel",
  }),
  // No such rule, or an empty rule: allowed callers get "not found" or a validation error, nothing is created, changed or sent.
  action(app("alerts/actions.ts"), "createAlertRuleAction", [{}], {
    roles: ADMINS,
    permission: "ops:manage",
    audit: "alert.rule_create",
  }),
  action(app("alerts/actions.ts"), "updateAlertRuleAction", [{ id: NO_JOB }], {
    roles: ADMINS,
    permission: "ops:manage",
    audit: "alert.rule_update",
  }),
  action(app("alerts/actions.ts"), "deleteAlertRuleAction", [{ id: NO_JOB }], {
    roles: ADMINS,
    permission: "ops:manage",
    audit: "alert.rule_delete",
  }),
  action(app("alerts/actions.ts"), "sendTestAlertAction", [{ id: NO_JOB }], {
    roles: ADMINS,
    permission: "ops:manage",
    audit: "alert.test_send",
  }),
  // No such finding / owner entry, or an empty pattern: allowed callers get "not found" or a validation error, nothing changes.
  action(app("findings/actions.ts"), "acknowledgeFindingAction", [{ id: NO_JOB }], {
    roles: OPERATORS,
    permission: "ops:acknowledge",
    audit: "finding.acknowledge",
  }),
  action(app("findings/actions.ts"), "acknowledgeFindingKindAction", [{ code: "e2e.no_such_kind" }], {
    roles: OPERATORS,
    permission: "ops:acknowledge",
    audit: "finding.acknowledge_all",
  }),
  // No such failure group, or a filter that matches none: allowed callers get "not found" or nothing to change.
  ...(
    [
      ["changeIssueStateAction", { ...NO_ISSUE, change: { state: "acknowledged" } }, "issue.state_change"],
      [
        "changeIssueStatesAction",
        { filter: { queue: "e2e.no.such.dlq" }, change: { state: "acknowledged" } },
        "issue.state_change_bulk",
      ],
      ["assignIssueAction", { ...NO_ISSUE, assignee: null }, "issue.assign"],
      ["addIssueNoteAction", { ...NO_ISSUE, text: "matrix" }, "issue.note"],
      ["addIssueLinkAction", { ...NO_ISSUE, url: "https://example.com/x" }, "issue.link"],
    ] as const
  ).map(([name, input, audit]) =>
    action(app("failures/actions.ts"), name, [input], { roles: OPERATORS, permission: "issues:write", audit }),
  ),
  action(app("owners/actions.ts"), "saveOwnerAction", [{ queuePattern: "", team: "", contact: "" }], {
    roles: ADMINS,
    permission: "ops:manage",
    audit: "owner.save",
  }),
  action(app("owners/actions.ts"), "deleteOwnerAction", [{ id: NO_JOB }], {
    roles: ADMINS,
    permission: "ops:manage",
    audit: "owner.delete",
  }),
  action(app(TRIAGE), "startScanAction", [{ ...NONE }], {
    roles: OPERATORS,
    permission: "triage:scan",
    audit: "triage.scan_start",
  }),
  action(app(TRIAGE), "cancelScanAction", [{ jobId: NO_JOB }], {
    roles: OPERATORS,
    permission: "triage:scan",
    audit: "triage.scan_cancel",
  }),

  // ---- pages (e2e: on the seeded hostile DLQ, so an allowed role sees the page itself)
  page(
    "admin/masking/page.tsx",
    "/admin/masking",
    { roles: ADMINS, permission: "masking:manage", audit: "masking.view" },
    "forbidden",
  ),
  page("admin/triage-rules/page.tsx", "/admin/triage-rules", {
    roles: EVERYONE,
    permission: "triage:read",
    audit: "triage.rules_view",
  }),
  page(
    "admin/tokens/page.tsx",
    "/admin/tokens",
    { roles: ADMINS, permission: "tokens:manage", audit: "token.list_all" },
    "forbidden",
  ),
  page(
    "admin/users/page.tsx",
    "/admin/users",
    { roles: ADMINS, permission: "users:manage", audit: "user.list" },
    "forbidden",
  ),
  page("alerts/page.tsx", "/alerts", { roles: EVERYONE, permission: "ops:read", audit: "alert.list" }),
  page("alerts/[id]/page.tsx", `/alerts/${NO_JOB}`, { roles: EVERYONE, permission: "ops:read", audit: "alert.view" }),
  page(
    "alerts/[id]/edit/page.tsx",
    `/alerts/${NO_JOB}/edit`,
    { roles: ADMINS, permission: "ops:manage", audit: "alert.rule_update" },
    "forbidden",
  ),
  page(
    "alerts/new/page.tsx",
    "/alerts/new",
    { roles: ADMINS, permission: "ops:manage", audit: "alert.rule_create" },
    "forbidden",
  ),
  page("archive/[id]/page.tsx", `/archive/${NO_JOB}`, {
    roles: EVERYONE,
    permission: "archive:read",
    audit: "archive.view",
  }),
  page("archive/(list)/page.tsx", "/archive", { roles: EVERYONE, permission: "archive:read", audit: "archive.list" }),
  page("audit/page.tsx", "/audit", { roles: OPERATORS, permission: "audit:read", audit: "audit.view" }, "forbidden"),
  page("discards/page.tsx", "/discards", { roles: EVERYONE, permission: "discard:read", audit: "discard.list" }),
  // The letter page sits in a route group with its loading.tsx, so that the repair page below it has none (it answers 403).
  page(
    "dlqs/[connectionId]/[queue]/letters/[letterId]/(letter)/page.tsx",
    `${SEEDED}/letters/m-${Buffer.from("hostile-json").toString("base64url")}`,
    { roles: EVERYONE, permission: "letter:read", audit: "letter.view" },
  ),
  // The seeded DLQ is not under the repair switch: an admin gets the page saying so (nothing read); others get 403.
  page(
    "dlqs/[connectionId]/[queue]/letters/[letterId]/repair/page.tsx",
    `${SEEDED}/letters/m-${Buffer.from("hostile-json").toString("base64url")}/repair`,
    { roles: ADMINS, permission: "letter:repair", audit: "letter.repair_plan" },
    "repair-forbidden",
  ),
  // Like the single-letter repair page: the seeded DLQ is not under the switch, so an admin is told so (nothing counted); others get 403.
  page(
    "dlqs/[connectionId]/[queue]/repair/page.tsx",
    `${SEEDED}/repair?group=matrix`,
    { roles: ADMINS, permission: "letter:repair", audit: "redrive.repair_preview" },
    "repair-group-forbidden",
  ),
  page("dlqs/[connectionId]/[queue]/discard/page.tsx", `${SEEDED}/discard`, {
    roles: EVERYONE,
    permission: "discard:read",
    audit: "discard.list",
  }),
  page("dlqs/[connectionId]/[queue]/discard/[jobId]/page.tsx", `${SEEDED}/discard/${NO_JOB}`, {
    roles: EVERYONE,
    permission: "discard:read",
    audit: "discard.view",
  }),
  page(
    "dlqs/[connectionId]/[queue]/discard/new/page.tsx",
    `${SEEDED}/discard/new`,
    { roles: ADMINS, permission: "discard:run", audit: "discard.plan" },
    "discard-forbidden",
  ),
  page("dlqs/[connectionId]/[queue]/(letters)/page.tsx", SEEDED, {
    roles: EVERYONE,
    permission: "dlq:browse",
    audit: "dlq.browse",
  }),
  page("dlqs/[connectionId]/[queue]/redrive/[jobId]/page.tsx", `${SEEDED}/redrive/${NO_JOB}`, {
    roles: EVERYONE,
    permission: "redrive:read",
    audit: "redrive.view",
  }),
  page(
    "dlqs/[connectionId]/[queue]/redrive/new/page.tsx",
    `${SEEDED}/redrive/new`,
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.plan" },
    "redrive-forbidden",
  ),
  page("dlqs/[connectionId]/[queue]/redrive/page.tsx", `${SEEDED}/redrive`, {
    roles: EVERYONE,
    permission: "redrive:read",
    audit: "redrive.list",
  }),
  page("dlqs/[connectionId]/[queue]/triage/page.tsx", `${SEEDED}/triage`, {
    roles: EVERYONE,
    permission: "triage:read",
    audit: "triage.groups",
  }),
  page("dlqs/[connectionId]/[queue]/health/page.tsx", `${SEEDED}/health`, {
    roles: EVERYONE,
    permission: "ops:read",
    audit: "ops.dlq",
  }),
  page("findings/page.tsx", "/findings", { roles: EVERYONE, permission: "ops:read", audit: "ops.findings" }),
  page("owners/page.tsx", "/owners", { roles: EVERYONE, permission: "ops:read", audit: "owner.list" }),
  page("failures/page.tsx", "/failures", { roles: EVERYONE, permission: "triage:read", audit: "issue.list" }),
  page(
    "failures/[connectionId]/[queue]/[groupKey]/page.tsx",
    `/failures/${q(NO_ISSUE.connectionId)}/${q(NO_ISSUE.queue)}/${q(NO_ISSUE.groupKey)}`,
    { roles: EVERYONE, permission: "triage:read", audit: "issue.view" },
  ),
  page("(home)/page.tsx", "/", { roles: EVERYONE, permission: "dlq:list", audit: "dlq.list" }),
  page("profile/page.tsx", "/profile", { roles: EVERYONE, permission: "tokens:own", audit: "token.list" }),
  // The OpenAPI document rendered: no data, so every role; under tokens:own, the permission of the tokens it documents.
  page("api-reference/page.tsx", "/api-reference", {
    roles: EVERYONE,
    permission: "tokens:own",
    audit: "api.reference",
  }),
  page("groups/(list)/page.tsx", "/groups", { roles: EVERYONE, permission: "groups:read", audit: "groups.list" }),
  page("groups/[connectionId]/[groupId]/page.tsx", STUCK_GROUP, {
    roles: EVERYONE,
    permission: "groups:read",
    audit: "groups.view",
  }),
  page(
    "groups/[connectionId]/[groupId]/[topic]/[partition]/page.tsx",
    `${STUCK_GROUP}/${q(KAFKA_STUCK_DEMO.topic)}/${KAFKA_STUCK_DEMO.partition}`,
    { roles: EVERYONE, permission: "groups:read", audit: "groups.record_view" },
  ),
  page("redrives/page.tsx", "/redrives", { roles: EVERYONE, permission: "redrive:read", audit: "redrive.list" }),
  page("signin/page.tsx", "/signin", { roles: EVERYONE, public: true }),
];

// ---- discovery: what the source says exists

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

/**
 * Names a module exports, read from its source: `export [async] function x`, `export const|let x`,
 * `export { a as x, y }`. `export *` and default exports are reported as such, so a form this
 * scanner does not read fails the tests instead of hiding an export.
 */
export function exportedNames(source: string): string[] {
  const names = new Set<string>();
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  for (const m of code.matchAll(/export\s+(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)/g)) names.add(m[1]);
  for (const m of code.matchAll(/export\s+(?:const|let|var)\s+([A-Za-z_$][\w$]*)/g)) names.add(m[1]);
  for (const m of code.matchAll(/export\s*\{([^}]*)\}/g)) {
    for (const part of m[1].split(",")) {
      const p = part.trim().replace(/^type\s+/, "");
      if (!p || part.trim().startsWith("type ")) continue;
      const as = /\bas\s+([A-Za-z_$][\w$]*)$/.exec(p);
      names.add(as ? as[1] : p);
    }
  }
  if (/export\s+\*/.test(code)) names.add("*");
  if (/export\s+default\b/.test(code)) names.add("default");
  return [...names];
}

export interface Discovered {
  routes: Array<{ file: string; method: string }>;
  actions: Array<{ file: string; name: string }>;
  pages: Array<{ file: string }>;
  /** Files with a "use server" directive inside a function (inline server actions): the scan cannot name them. */
  inlineActions: string[];
}

function isUseServerFile(source: string): boolean {
  // The directive must be the first statement (comments and blank lines may come before it).
  const stripped = source.replace(/^(?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*/, "");
  return /^["']use server["']/.test(stripped);
}

/** Every route handler method, server action and page in the source tree. */
export function discover(root: string = ROOT): Discovered {
  const out: Discovered = { routes: [], actions: [], pages: [], inlineActions: [] };
  const rel = (p: string) => path.relative(root, p).split(path.sep).join("/");
  const appDir = path.join(root, "app");
  for (const f of walk(appDir)) {
    const name = path.basename(f);
    const file = path.relative(appDir, f).split(path.sep).join("/");
    if (/^route\.(ts|tsx|js)$/.test(name)) {
      const src = readFileSync(f, "utf8");
      const exported = exportedNames(src);
      for (const m of HTTP_METHODS) if (exported.includes(m)) out.routes.push({ file, method: m });
      if (exported.includes("*") || exported.includes("default"))
        out.routes.push({ file, method: exported.includes("*") ? "export *" : "default" });
    }
    if (/^page\.(ts|tsx|js|jsx)$/.test(name)) out.pages.push({ file });
  }
  for (const dir of ["app", "lib", "components"]) {
    if (!existsSync(path.join(root, dir))) continue;
    for (const f of walk(path.join(root, dir))) {
      if (!/\.(ts|tsx)$/.test(f) || /\.test\.tsx?$/.test(f)) continue;
      const src = readFileSync(f, "utf8");
      const directives = src.match(/^\s*["']use server["'];?\s*$/gm)?.length ?? 0;
      if (directives > (isUseServerFile(src) ? 1 : 0)) out.inlineActions.push(rel(f));
      if (!isUseServerFile(src)) continue;
      // A "use server" module's exports are all server actions, whatever their shape.
      for (const n of exportedNames(src)) out.actions.push({ file: rel(f), name: n });
    }
  }
  return out;
}

/** Discovered targets without a row in the matrix, in words a reader can act on. */
export function missingRows(d: Discovered, matrix: MatrixRow[] = [...MATRIX, ...TOKEN_MATRIX]): string[] {
  const missing: string[] = [];
  const has = (pred: (r: MatrixRow) => boolean) => matrix.some(pred);
  for (const r of d.routes)
    if (!has((x) => x.kind === "route" && x.file === r.file && x.method === r.method))
      missing.push(`route ${r.method} app/${r.file}`);
  for (const a of d.actions)
    if (!has((x) => x.kind === "action" && x.file === a.file && x.name === a.name))
      missing.push(`server action ${a.name} in ${a.file}`);
  for (const p of d.pages) if (!has((x) => x.kind === "page" && x.file === p.file)) missing.push(`page app/${p.file}`);
  for (const f of d.inlineActions)
    missing.push(
      `inline "use server" function in ${f} (move it to an actions.ts with "use server" at the top, so it can be listed)`,
    );
  return missing;
}

/** Rows naming something the source no longer has (a renamed or deleted handler). */
export function staleRows(d: Discovered, matrix: MatrixRow[] = [...MATRIX, ...TOKEN_MATRIX]): string[] {
  return matrix
    .filter((x) =>
      x.kind === "route"
        ? !d.routes.some((r) => r.file === x.file && r.method === x.method)
        : x.kind === "action"
          ? !d.actions.some((a) => a.file === x.file && a.name === x.name)
          : !d.pages.some((p) => p.file === x.file),
    )
    .map(rowKey);
}

/**
 * The loading.tsx files that wrap a page (its own folder's and every ancestor's under app/). Each
 * is a Suspense boundary: once its fallback streams, the status is committed to 200, so a page
 * that refuses some role must have none (its forbidden() then answers 403: lib/auth/authorize-page.ts).
 */
export function loadingFilesAbove(pageFile: string, root: string = ROOT): string[] {
  const parts = pageFile.split("/").slice(0, -1);
  const found: string[] = [];
  for (let i = 0; i <= parts.length; i++) {
    const dir = ["app", ...parts.slice(0, i)].join("/");
    for (const ext of ["tsx", "ts", "jsx", "js"])
      if (existsSync(path.join(root, dir, `loading.${ext}`))) found.push(`${dir}/loading.${ext}`);
  }
  return found;
}

export const MISSING_ROW_HELP =
  "Add a row to test/access-matrix.ts for each of these (who may call it, the permission a refusal names, the audit action it is recorded under). " +
  "Discard/undo/archive export are admin only (DESIGN.md).";
