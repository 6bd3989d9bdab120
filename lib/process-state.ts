/**
 * State that must exist once per process: the database client and its PGlite lock, the job
 * worker, broker connections, pools, caches.
 *
 * Next's production server can load one server module several times in a process (Turbopack puts
 * it into separate chunks for route handlers, pages and instrumentation), and every copy has its
 * own module-level variables. A module-level `let client` is then opened more than once: with
 * PGlite the second copy finds the lock its own process holds. What is kept here lives on
 * `globalThis` under a `Symbol.for` key, which every copy of a module resolves to the same slot.
 */
export function processState<T extends object>(name: string, init: () => T): T {
  const slots = globalThis as unknown as Record<symbol, T | undefined>;
  const key = Symbol.for(`dlq-console.${name}`);
  let state = slots[key];
  if (state === undefined) {
    state = init();
    slots[key] = state;
  }
  return state;
}
