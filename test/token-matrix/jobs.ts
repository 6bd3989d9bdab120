import { ADMINS, EVERYONE, NO_JOB, NONE, OPERATORS, q, route, type RouteRow } from "../matrix-kit";

const OF_NONE = `connectionId=${q(NONE.connectionId)}&queue=${q(NONE.queue)}`;
const ID = { params: { id: NO_JOB } };

/**
 * Redrives, discards, jobs and their ledgers. Allowed calls get past authorization and end in a
 * bad body (POST with `{}`), "not found" (NO_JOB) or an empty list. The generic job routes are open
 * to every role (dlq:list); which kinds a role then sees is tested in lib/api/v1/jobs.integration.test.ts.
 * The bulk route's guard is redrive:bulk, asked before the body is read; an `overrideReason` then
 * also needs redrive:override (startBulk), tested in lib/api/v1/redrives.integration.test.ts.
 */
export const JOB_TOKEN_ROWS: RouteRow[] = [
  route(
    "api/v1/redrives/plan/route.ts",
    "POST",
    "/api/v1/redrives/plan",
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.plan" },
    { body: {} },
  ),
  route(
    "api/v1/redrives/route.ts",
    "POST",
    "/api/v1/redrives",
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.start" },
    { body: {} },
  ),
  route("api/v1/redrives/route.ts", "GET", `/api/v1/redrives?${OF_NONE}`, {
    roles: EVERYONE,
    permission: "redrive:read",
    audit: "redrive.list",
  }),
  route(
    "api/v1/redrives/[id]/route.ts",
    "GET",
    `/api/v1/redrives/${NO_JOB}`,
    { roles: EVERYONE, permission: "redrive:read", audit: "redrive.view" },
    ID,
  ),
  route(
    "api/v1/redrives/[id]/bulk/route.ts",
    "POST",
    `/api/v1/redrives/${NO_JOB}/bulk`,
    { roles: OPERATORS, permission: "redrive:bulk", audit: "redrive.bulk_start" },
    { ...ID, body: {} },
  ),
  route(
    "api/v1/redrives/[id]/pause/route.ts",
    "POST",
    `/api/v1/redrives/${NO_JOB}/pause`,
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.pause" },
    { ...ID, body: {} },
  ),
  route(
    "api/v1/redrives/[id]/resume/route.ts",
    "POST",
    `/api/v1/redrives/${NO_JOB}/resume`,
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.resume" },
    { ...ID, body: {} },
  ),
  route(
    "api/v1/redrives/[id]/cancel/route.ts",
    "POST",
    `/api/v1/redrives/${NO_JOB}/cancel`,
    { roles: OPERATORS, permission: "redrive:sample", audit: "redrive.cancel" },
    { ...ID, body: {} },
  ),
  route(
    "api/v1/discards/plan/route.ts",
    "POST",
    "/api/v1/discards/plan",
    { roles: ADMINS, permission: "discard:run", audit: "discard.plan" },
    { body: {} },
  ),
  route(
    "api/v1/discards/route.ts",
    "POST",
    "/api/v1/discards",
    { roles: ADMINS, permission: "discard:run", audit: "discard.start" },
    { body: {} },
  ),
  route("api/v1/discards/route.ts", "GET", `/api/v1/discards?${OF_NONE}`, {
    roles: EVERYONE,
    permission: "discard:read",
    audit: "discard.list",
  }),
  route(
    "api/v1/discards/[id]/route.ts",
    "GET",
    `/api/v1/discards/${NO_JOB}`,
    { roles: EVERYONE, permission: "discard:read", audit: "discard.view" },
    ID,
  ),
  route(
    "api/v1/discards/[id]/cancel/route.ts",
    "POST",
    `/api/v1/discards/${NO_JOB}/cancel`,
    { roles: ADMINS, permission: "discard:run", audit: "discard.cancel" },
    { ...ID, body: {} },
  ),
  route("api/v1/jobs/route.ts", "GET", `/api/v1/jobs?${OF_NONE}`, {
    roles: EVERYONE,
    permission: "dlq:list",
    audit: "job.list",
  }),
  route(
    "api/v1/jobs/[id]/route.ts",
    "GET",
    `/api/v1/jobs/${NO_JOB}`,
    { roles: EVERYONE, permission: "dlq:list", audit: "job.view" },
    ID,
  ),
  route(
    "api/v1/jobs/[id]/ledger/route.ts",
    "GET",
    `/api/v1/jobs/${NO_JOB}/ledger`,
    { roles: EVERYONE, permission: "dlq:list", audit: "job.ledger" },
    ID,
  ),
];
