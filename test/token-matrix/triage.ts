import type { RouteRow } from "../matrix-kit";

/** Letters, scans, groups and filtered letter sets. */
export const TRIAGE_TOKEN_ROWS: RouteRow[] = [];
