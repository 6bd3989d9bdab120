import { EVERYONE, NO_JOB, NONE, OPERATORS, q, route, type RouteRow } from "../matrix-kit";

const DLQ = `/api/v1/dlqs/${q(NONE.connectionId)}/${q(NONE.queue)}`;
const OF_NONE = `connectionId=${q(NONE.connectionId)}&queue=${q(NONE.queue)}`;

/**
 * Letters, scans, groups and filtered letter sets. Allowed calls reach the use case and end in
 * "not found" (NONE, NO_JOB) or an empty list; a risky read's own permission (dlq:browse-risky,
 * asked by openDlq and viewLetter with acceptRisk) is tested in lib/api/v1/triage.integration.test.ts.
 */
export const TRIAGE_TOKEN_ROWS: RouteRow[] = [
  route(
    "api/v1/dlqs/[connectionId]/[queue]/letters/route.ts",
    "GET",
    `${DLQ}/letters?limit=5`,
    { roles: EVERYONE, permission: "dlq:browse", audit: "dlq.open" },
    { params: { ...NONE } },
  ),
  route(
    "api/v1/dlqs/[connectionId]/[queue]/letters/[letterId]/route.ts",
    "GET",
    `${DLQ}/letters/m-bWF0cml4`,
    { roles: EVERYONE, permission: "letter:read", audit: "letter.view" },
    { params: { ...NONE, letterId: "m-bWF0cml4" } },
  ),
  route("api/v1/scans/route.ts", "GET", `/api/v1/scans?${OF_NONE}`, {
    roles: EVERYONE,
    permission: "triage:read",
    audit: "triage.scan_list",
  }),
  route(
    "api/v1/scans/route.ts",
    "POST",
    "/api/v1/scans",
    { roles: OPERATORS, permission: "triage:scan", audit: "triage.scan_start" },
    { body: { ...NONE } },
  ),
  route(
    "api/v1/scans/[id]/route.ts",
    "GET",
    `/api/v1/scans/${NO_JOB}`,
    { roles: EVERYONE, permission: "triage:read", audit: "triage.scan_view" },
    { params: { id: NO_JOB } },
  ),
  route(
    "api/v1/scans/[id]/cancel/route.ts",
    "POST",
    `/api/v1/scans/${NO_JOB}/cancel`,
    { roles: OPERATORS, permission: "triage:scan", audit: "triage.scan_cancel" },
    { params: { id: NO_JOB }, body: {} },
  ),
  route("api/v1/groups/route.ts", "GET", `/api/v1/groups?${OF_NONE}`, {
    roles: EVERYONE,
    permission: "triage:read",
    audit: "triage.groups",
  }),
  route("api/v1/letters/route.ts", "GET", `/api/v1/letters?${OF_NONE}`, {
    roles: EVERYONE,
    permission: "triage:read",
    audit: "triage.letters",
  }),
];
