/**
 * Where a benchmark's CPU goes, per process: this Node process (and its garbage collection),
 * Postgres and RabbitMQ, read from Linux /proc (zeros elsewhere). On a 2-core machine these three
 * compete for the same cores, so a rate is bounded by their CPU time per letter.
 */
import { readdirSync, readFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";

/** The RabbitMQ node the benchmark uses (DLQ_TEST_RABBITMQ_NODE, see scripts/rabbitmq-node.sh): only its beam.smp (RABBITMQ_NODENAME in its environment) is counted; unset, every beam.smp. */
const RABBIT_NODE = process.env.DLQ_TEST_RABBITMQ_NODE;

/** CPU seconds used so far by every process named `comm` whose environment holds `env` (if given). */
function processCpu(comm: string, env?: string): number {
  let ticks = 0;
  let pids: string[] = [];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      const st = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (st.slice(st.indexOf("(") + 1, st.lastIndexOf(")")) !== comm) continue;
      if (env && !readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(env)) continue;
      const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
      ticks += Number(f[11]) + Number(f[12]); // utime, stime
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks / 100;
}

/** Time this process spent in garbage collection (seconds), from the gc performance entries. */
let gcSeconds = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcSeconds += e.duration / 1000;
}).observe({ entryTypes: ["gc"] });

export type Cpu = { node: number; gc: number; postgres: number; rabbitmq: number };

export function cpuNow(): Cpu {
  const u = process.cpuUsage();
  return {
    node: (u.user + u.system) / 1e6,
    gc: gcSeconds,
    postgres: processCpu("postgres"),
    rabbitmq: processCpu("beam.smp", RABBIT_NODE ? `RABBITMQ_NODENAME=${RABBIT_NODE}` : undefined),
  };
}

/** CPU seconds per process between two readings (gc read after a tick, so the observer has reported). */
export async function cpuSince(c0: Cpu): Promise<Cpu> {
  const c1 = cpuNow();
  await new Promise((r) => setImmediate(r));
  const c2 = cpuNow();
  return {
    node: c1.node - c0.node,
    gc: c2.gc - c0.gc,
    postgres: c1.postgres - c0.postgres,
    rabbitmq: c1.rabbitmq - c0.rabbitmq,
  };
}

/** "Node 53 µs (gc 4), Postgres 40, RabbitMQ 50 = 143 µs of CPU per letter" */
export function perLetter(c: Cpu, letters: number): string {
  const us = (s: number) => Math.round((s * 1e6) / Math.max(1, letters));
  return `Node ${us(c.node)} µs (gc ${us(c.gc)}), Postgres ${us(c.postgres)}, RabbitMQ ${us(c.rabbitmq)} = ${us(c.node + c.postgres + c.rabbitmq)} µs of CPU per letter`;
}
