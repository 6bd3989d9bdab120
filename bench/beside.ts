import { monitorEventLoopDelay } from "node:perf_hooks";

/**
 * What a page served by the same process meets while a job runs (the console runs its job worker in
 * its web server's process): the event loop's delay (ms: p50, p99, max), and a probe, `query` (a
 * `SELECT 1` through the console's database client) every 50 ms, as a page's query (ms: p50, p99,
 * max, and how many ran).
 */
export interface Beside {
  loop: [number, number, number];
  query: [number, number, number, number];
}

/** Starts measuring; `stop()` ends it and returns the figures. */
export function measureBeside(query: () => Promise<unknown>): { stop(): Promise<Beside> } {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  const probes: number[] = [];
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const t = performance.now();
      await query();
      probes.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  loop.enable();
  return {
    async stop() {
      loop.disable();
      probing = false;
      await probe;
      probes.sort((a, b) => a - b);
      const at = (q: number) =>
        Math.round((probes[Math.min(probes.length - 1, Math.floor(q * probes.length))] ?? 0) * 10) / 10;
      const ms = (ns: number) => Math.round(ns / 1e5) / 10;
      return {
        loop: [ms(loop.percentile(50)), ms(loop.percentile(99)), ms(loop.max)],
        query: [at(0.5), at(0.99), at(1), probes.length],
      };
    },
  };
}

/** One line of the figures, for the job named `what`. */
export function besideLine(what: string, { loop, query }: Beside): string {
  return (
    `beside the ${what}, in its process (as the console's pages are): event-loop delay p50 ${loop[0]} ms, p99 ${loop[1]}, max ${loop[2]}; ` +
    `a SELECT 1 through the console's client every 50 ms: p50 ${query[0]} ms, p99 ${query[1]}, max ${query[2]} (${query[3]} probes)`
  );
}
