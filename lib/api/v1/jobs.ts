// Filled in by the jobs operations of /api/v1 (see lib/api/v1/index.ts).
export {};
