import type { RouteRow } from "../matrix-kit";
import { CORE_TOKEN_ROWS } from "./core";
import { ISSUE_TOKEN_ROWS } from "./issues";
import { JOB_TOKEN_ROWS } from "./jobs";
import { TRIAGE_TOKEN_ROWS } from "./triage";

/**
 * Token routes (app/api/v1): they take `Authorization: Bearer` and never a session cookie, and
 * answer problem details, so the cookie-driven checks of MATRIX cannot call them. They are kept
 * apart, one file per area of the API: discovery counts them as covered (missingRows, staleRows),
 * and lib/api/v1-matrix.integration.test.ts calls each with a real token per role (allowed: past
 * authorization with no denial on record; refused with 403 and audited with the token id; no token
 * and a session cookie alone: 401).
 */
export const TOKEN_MATRIX: RouteRow[] = [
  ...CORE_TOKEN_ROWS,
  ...TRIAGE_TOKEN_ROWS,
  ...ISSUE_TOKEN_ROWS,
  ...JOB_TOKEN_ROWS,
];
