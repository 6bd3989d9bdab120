import { EVERYONE, NONE, OPERATORS, q, route, type RouteRow } from "../matrix-kit";

const ISSUE = { ...NONE, groupKey: "matrix-none-group" };

/**
 * Failure issues across DLQs. Allowed calls reach the use case and end in an empty list or "not
 * found" (no such group in NONE).
 */
export const ISSUE_TOKEN_ROWS: RouteRow[] = [
  route("api/v1/issues/route.ts", "GET", `/api/v1/issues?queue=${q(NONE.queue)}`, {
    roles: EVERYONE,
    permission: "triage:read",
    audit: "issue.list",
  }),
  route(
    "api/v1/issues/state/route.ts",
    "POST",
    "/api/v1/issues/state",
    { roles: OPERATORS, permission: "issues:write", audit: "issue.state_change" },
    { body: { ...ISSUE, state: "acknowledged" } },
  ),
  route(
    "api/v1/issues/notes/route.ts",
    "POST",
    "/api/v1/issues/notes",
    { roles: OPERATORS, permission: "issues:write", audit: "issue.note" },
    { body: { ...ISSUE, text: "a note" } },
  ),
  route(
    "api/v1/issues/links/route.ts",
    "POST",
    "/api/v1/issues/links",
    { roles: OPERATORS, permission: "issues:write", audit: "issue.link" },
    { body: { ...ISSUE, url: "https://example.com/" } },
  ),
];
