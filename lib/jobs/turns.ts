import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * How long a job's loop may run on the event loop before it lets the rest of the process in. The
 * console runs its job worker in its web server's process: a loop over letters the broker has
 * already handed over (a scan's stream buffers thousands) never waits for I/O, so a page's request,
 * and each answer to its queries, waited behind whole batches. A page makes dozens of such hops,
 * so the slice is short: its turns cost the scan nothing measurable (bench/triage-scan.ts, 50,000
 * RabbitMQ letters, two alternated pairs: the event loop's delay at p99 92-120 ms without turns,
 * 27-32 ms with them; a `SELECT 1` beside the scan 135-166 ms, 45-74 ms; the scan 7,700-8,700
 * letters/s, 10,000-11,800, as the adapter's socket and the index's writes are served between
 * slices too).
 */
export const TURN_SLICE_MS = 3;

/**
 * A loop's cooperative turns: `turn()` returns at once while the loop has run for less than
 * `sliceMs` since it last gave way, else waits one turn of the event loop (setImmediate: after the
 * I/O callbacks that are ready), so pages served by the same process answer within about a slice.
 */
export function cooperativeTurns(sliceMs = TURN_SLICE_MS): { turn(): Promise<void> | null } {
  let since = performance.now();
  return {
    turn() {
      const now = performance.now();
      if (now - since < sliceMs) return null;
      return nextTurn().then(() => {
        since = performance.now();
      });
    },
  };
}
