// Filled in by the discards operations of /api/v1 (see lib/api/v1/index.ts).
export {};
