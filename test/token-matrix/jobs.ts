import type { RouteRow } from "../matrix-kit";

/** Redrives, discards, jobs and their ledgers. */
export const JOB_TOKEN_ROWS: RouteRow[] = [];
