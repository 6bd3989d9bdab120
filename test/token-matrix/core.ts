import { EVERYONE, OPERATORS, route, type RouteRow } from "../matrix-kit";

/** Listing, the audit log and the document. */
export const CORE_TOKEN_ROWS: RouteRow[] = [
  route("api/v1/audit/route.ts", "GET", "/api/v1/audit?limit=1", {
    roles: OPERATORS,
    permission: "audit:read",
    audit: "audit.view",
  }),
  route("api/v1/audit/export/route.ts", "GET", "/api/v1/audit/export?format=ndjson&action=matrix.none", {
    roles: OPERATORS,
    permission: "audit:read",
    audit: "audit.export",
  }),
  route("api/v1/dlqs/route.ts", "GET", "/api/v1/dlqs", { roles: EVERYONE, permission: "dlq:list", audit: "dlq.list" }),
  // The OpenAPI document: schemas and texts only, no token needed.
  route("api/v1/openapi.json/route.ts", "GET", "/api/v1/openapi.json", { roles: EVERYONE, public: true }),
];
