/**
 * Where a benchmark's CPU goes, per process: this Node process (and its garbage collection),
 * Postgres and the broker, read from Linux /proc (zeros elsewhere). On a 2-core machine these
 * compete for the same cores, so a rate is bounded by their CPU time per letter.
 *
 * Postgres counts what this benchmark makes Postgres do, not every postgres process on the
 * machine (other test runs share the server): the backends connected to the benchmark's database
 * (the database of DATABASE_URL when read, or cpuDatabase()), their parallel workers, and the
 * server's background processes (walwriter, checkpointer, background writer, autovacuum), which
 * serve every database. The postmaster's children are read every 200 ms, so a backend that ends
 * between two readings still counts up to its last sample. A backend is told by its process title
 * ("postgres: <cluster>: <user> <database> <host> <activity>"); with update_process_title off no
 * title says what a process is and the figure is every postgres process (cpuScope() says which).
 * `postgresAll` is every postgres process on the machine (the old figure; other runs' work included).
 *
 * The broker is the one named by measureBroker() (RabbitMQ by default): its server process.
 */
import { readdirSync, readFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";

/** The RabbitMQ node the benchmark uses (DLQ_TEST_RABBITMQ_NODE, see scripts/rabbitmq-node.sh): only its beam.smp (RABBITMQ_NODENAME in its environment) is counted; unset, every beam.smp. */
const RABBIT_NODE = process.env.DLQ_TEST_RABBITMQ_NODE;

export type Broker = "rabbitmq" | "kafka" | "elasticmq" | "pulsar";
let broker: Broker = "rabbitmq";
/** Which broker's server process the `broker` figure counts (RabbitMQ unless told). */
export function measureBroker(b: Broker): void {
  broker = b;
}
let database: string | null = null;
/** The database whose backends count as this benchmark's (default: DATABASE_URL's when read). */
export function cpuDatabase(name: string | null): void {
  database = name;
}
function benchDatabase(): string | null {
  if (database) return database;
  try {
    const name = process.env.DATABASE_URL
      ? decodeURIComponent(new URL(process.env.DATABASE_URL).pathname.slice(1))
      : "";
    return name && name !== "postgres" ? name : null; // the maintenance database is everyone's
  } catch {
    return null;
  }
}

const pids = (): string[] => {
  try {
    return readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
};
/** [comm, utime + stime in ticks, start time, parent pid] of a process, or null if it ended. */
function stat(pid: string): { comm: string; ticks: number; start: string; ppid: string } | null {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    return {
      comm: st.slice(st.indexOf("(") + 1, st.lastIndexOf(")")),
      ticks: Number(f[11]) + Number(f[12]),
      start: f[19],
      ppid: f[1],
    };
  } catch {
    return null;
  }
}
const cmdline = (pid: string): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "";
  }
};

/**
 * Whether a process is the broker's server. RabbitMQ: the beam.smp of DLQ_TEST_RABBITMQ_NODE if set,
 * else the machine's own node (a private node, scripts/rabbitmq-node.sh, has RABBITMQ_NODENAME in
 * its environment; the system node's environment is not readable or has none). A java broker is
 * told by its command line.
 */
function isBroker(b: Broker, pid: string, comm: string): boolean {
  if (b === "rabbitmq") {
    if (comm !== "beam.smp") return false;
    let env: string[] = [];
    try {
      env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    } catch {
      return !RABBIT_NODE;
    }
    return RABBIT_NODE
      ? env.includes(`RABBITMQ_NODENAME=${RABBIT_NODE}`)
      : !env.some((e) => e.startsWith("RABBITMQ_NODENAME="));
  }
  const mark = { kafka: "kafka.Kafka", elasticmq: "elasticmq", pulsar: "pulsar" }[b];
  return comm === "java" && cmdline(pid).includes(mark);
}
/** Per broker, its processes' last ticks (pid:start → ticks): a process that ends keeps what it used, so no figure goes down. */
const brokerSeen = new Map<Broker, Map<string, number>>();
const brokerChecked = new Map<string, boolean>(); // pid:start → is it one
function brokerCpu(b: Broker): number {
  const seen = brokerSeen.get(b) ?? new Map<string, number>();
  brokerSeen.set(b, seen);
  for (const pid of pids()) {
    const s = stat(pid);
    if (!s || (s.comm !== "beam.smp" && s.comm !== "java")) continue;
    const key = `${b}:${pid}:${s.start}`;
    if (!brokerChecked.has(key)) brokerChecked.set(key, isBroker(b, pid, s.comm));
    if (brokerChecked.get(key)) seen.set(key, s.ticks);
  }
  let ticks = 0;
  for (const t of seen.values()) ticks += t;
  return ticks / 100;
}

// Postgres: the postmaster's children, sampled; per process its last ticks and what it is.
type PgProc = { ticks: number; kind: "background" | "backend" | "parallel" | "other"; db?: string; leader?: string };
const pgSeen = new Map<string, PgProc>(); // pid:start → last sample
let postmaster: string | null = null;
let titles = false;
function samplePostgres(): void {
  if (!postmaster || !stat(postmaster)) {
    postmaster = null;
    for (const pid of pids()) {
      const s = stat(pid);
      if (s?.comm === "postgres" && stat(s.ppid)?.comm !== "postgres") {
        postmaster = pid;
        break;
      }
    }
    if (!postmaster) return;
  }
  let children: string[] = [];
  try {
    children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, "utf8").trim().split(/\s+/);
  } catch {
    return;
  }
  for (const pid of children.filter(Boolean)) {
    const s = stat(pid);
    if (!s) continue;
    const key = `${pid}:${s.start}`;
    const known = pgSeen.get(key);
    // Told apart once, but a backend caught before it set its title (just forked) is looked at again.
    if (known && known.kind !== "other") {
      known.ticks = s.ticks;
      continue;
    }
    // "postgres: 15/main: checkpointer", "postgres: 15/main: dlq_console dlq_x 127.0.0.1(5432) idle"
    const title = cmdline(pid).replace(/^postgres:\s*/, "");
    const words = title.replace(/^\S+\/\S+:\s*/, "").split(/\s+/);
    const rest = words.join(" ");
    let p: PgProc = { ticks: s.ticks, kind: "other" };
    if (/^(checkpointer|background writer|walwriter|autovacuum)/.test(rest)) {
      p = { ticks: s.ticks, kind: "background" };
      titles = true;
    } else if (/^parallel worker for PID (\d+)/.test(rest))
      p = { ticks: s.ticks, kind: "parallel", leader: /PID (\d+)/.exec(rest)![1] };
    else if (words.length >= 3 && /\(\d+\)$|^\[local\]$|^127\.|^::1|^localhost/.test(words[2])) {
      p = { ticks: s.ticks, kind: "backend", db: words[1] };
    }
    pgSeen.set(key, p);
  }
}
let sampler: NodeJS.Timeout | null = null;
function postgresCpu(): { ours: number; backends: number; all: number; scope: string } {
  if (!sampler) {
    sampler = setInterval(samplePostgres, 200);
    sampler.unref();
  }
  samplePostgres();
  const db = benchDatabase();
  const leaders = new Set<string>();
  let ours = 0;
  for (const [key, p] of pgSeen)
    if (p.kind === "backend" && p.db === db) {
      ours += p.ticks;
      leaders.add(key.split(":")[0]);
    }
  for (const p of pgSeen.values()) if (p.kind === "parallel" && leaders.has(p.leader!)) ours += p.ticks;
  const backends = ours;
  for (const p of pgSeen.values()) if (p.kind === "background") ours += p.ticks;
  // Every postgres process: the postmaster and every child ever sampled (an ended one at its last sample).
  let all = stat(postmaster ?? "")?.ticks ?? 0;
  for (const p of pgSeen.values()) all += p.ticks;
  all /= 100;
  if (!titles) return { ours: all, backends: all, all, scope: "every postgres process (update_process_title is off)" };
  return {
    ours: ours / 100,
    backends: backends / 100,
    all,
    scope: db ? `backends of ${db} + background processes` : "background processes (no database of its own)",
  };
}

/** Time this process spent in garbage collection (seconds), from the gc performance entries. */
let gcSeconds = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcSeconds += e.duration / 1000;
}).observe({ entryTypes: ["gc"] });

export type Cpu = {
  node: number;
  gc: number;
  /** This benchmark's Postgres: its database's backends and the background processes (see above). */
  postgres: number;
  /** Its database's backends (and their parallel workers) alone: without the background processes, which also serve every other database on the server. */
  postgresBackends: number;
  /** Every postgres process on the machine. */
  postgresAll: number;
  /** The broker measureBroker() names. */
  broker: number;
  /** The same figure as `broker` when it is RabbitMQ, else 0 (what older callers read). */
  rabbitmq: number;
};

export function cpuNow(): Cpu {
  const u = process.cpuUsage();
  const pg = postgresCpu();
  const b = brokerCpu(broker);
  return {
    node: (u.user + u.system) / 1e6,
    gc: gcSeconds,
    postgres: pg.ours,
    postgresBackends: pg.backends,
    postgresAll: pg.all,
    broker: b,
    rabbitmq: broker === "rabbitmq" ? b : 0,
  };
}

/** What the postgres figure counts, and the broker, in words (for a benchmark's output). */
export function cpuScope(): string {
  return `postgres: ${postgresCpu().scope}; broker: ${broker}${broker === "rabbitmq" && RABBIT_NODE ? ` node ${RABBIT_NODE}` : ""}`;
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
    postgresBackends: c1.postgresBackends - c0.postgresBackends,
    postgresAll: c1.postgresAll - c0.postgresAll,
    broker: c1.broker - c0.broker,
    rabbitmq: c1.rabbitmq - c0.rabbitmq,
  };
}

/** A reading of zero, to add phases into. */
export const zeroCpu = (): Cpu => ({
  node: 0,
  gc: 0,
  postgres: 0,
  postgresBackends: 0,
  postgresAll: 0,
  broker: 0,
  rabbitmq: 0,
});

/** "Node 53 µs (gc 4), Postgres 40 (every process 55), RabbitMQ 50 = 143 µs of CPU per letter" */
export function perLetter(c: Cpu, letters: number): string {
  const us = (s: number) => Math.round((s * 1e6) / Math.max(1, letters));
  return `Node ${us(c.node)} µs (gc ${us(c.gc)}), Postgres ${us(c.postgres)} (its backends ${us(c.postgresBackends)}, every postgres process ${us(c.postgresAll)}), ${broker} ${us(c.broker)} = ${us(c.node + c.postgres + c.broker)} µs of CPU per letter`;
}
