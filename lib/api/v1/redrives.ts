// Filled in by the redrives operations of /api/v1 (see lib/api/v1/index.ts).
export {};
