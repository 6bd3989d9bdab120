// Filled in by the letters operations of /api/v1 (see lib/api/v1/index.ts).
export {};
