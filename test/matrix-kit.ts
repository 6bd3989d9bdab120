/**
 * The building blocks of the authorization matrix (test/access-matrix.ts) and of the token matrix
 * (test/token-matrix/*.ts): roles, the "nothing there" targets and the row constructor. A file of
 * its own so that the token rows, kept one file per area of the API, need nothing from the matrix.
 */
export type Role = "viewer" | "operator" | "admin";
export const MATRIX_ROLES: readonly Role[] = ["viewer", "operator", "admin"];

/** Who may: signed-in roles; `public` also lets a request without a session through. */
export const EVERYONE: readonly Role[] = ["viewer", "operator", "admin"];
export const OPERATORS: readonly Role[] = ["operator", "admin"];
export const ADMINS: readonly Role[] = ["admin"];

export const NO_JOB = "00000000-0000-0000-0000-000000000000";
/** A DLQ that exists on no broker: allowed calls get as far as "not found", nothing is read or moved. */
export const NONE = { connectionId: "local-rabbitmq", queue: "matrix.none.dlq" } as const;
export const q = (s: string) => encodeURIComponent(s);

export interface Guard {
  /** A distinct case of the same target (e.g. "with payloads"). */
  variant?: string;
  /** Roles the server lets through. Everyone else is refused with `forbidden:<permission>`. */
  roles: readonly Role[];
  /** The permission named in the refusal (the error code is `forbidden:<permission>`). */
  permission?: string;
  /** The audit action a refusal is recorded under (outcome "denied"). */
  audit?: string;
  /** No session needed (sign-in, health, CSP reports). */
  public?: boolean;
}

export interface RouteRow extends Guard {
  kind: "route";
  /** Path of the route file under app/, e.g. "api/redrive/[id]/bulk/route.ts". */
  file: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS";
  /** Concrete URL path and query. */
  url: string;
  /** The dynamic segments, as Next hands them to the handler. */
  params?: Record<string, string | string[]>;
  body?: unknown;
}

export const route = (
  file: string,
  method: RouteRow["method"],
  url: string,
  g: Guard,
  extra: Partial<RouteRow> = {},
): RouteRow => ({ kind: "route", file, method, url, ...g, ...extra });
