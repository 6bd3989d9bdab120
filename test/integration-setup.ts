import { tmpdir } from "node:os";
import path from "node:path";

// Integration tests run against the real Postgres and brokers on this machine.
// scripts/test.sh sets DATABASE_URL to a database it created for the run; this default lets a
// developer run `npx vitest run --project integration` after `scripts/test.sh integration` prepared it once.
process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/dlq_console_test";
process.env.RABBITMQ_URL ??= "amqp://guest:guest@127.0.0.1:5672";
process.env.RABBITMQ_MANAGEMENT_URL ??= "http://guest:guest@127.0.0.1:15672";

// Files run in parallel, one database per worker: scripts/test.sh migrates DATABASE_URL's database
// once and clones it per worker (`CREATE DATABASE <name>_w<n> TEMPLATE <name>`), and says how many
// in DLQ_TEST_DB_WORKERS. Queues, topics and users are named per test (the test kits' prefixes), so
// the brokers need no such split.
const workers = Number(process.env.DLQ_TEST_DB_WORKERS ?? 0);
if (workers > 0) {
  const worker = Number(process.env.VITEST_POOL_ID);
  if (!Number.isInteger(worker) || worker < 1 || worker > workers) {
    throw new Error(
      `vitest worker ${process.env.VITEST_POOL_ID} has no database: scripts/test.sh made ${workers}; run vitest with --maxWorkers=${workers}`,
    );
  }
  for (const key of ["DATABASE_URL", "DATABASE_OWNER_URL"] as const) {
    const value = process.env[key];
    if (!value) continue;
    const url = new URL(value);
    // A worker process may run several files: name the database once.
    if (!url.pathname.endsWith(`_w${worker}`)) url.pathname = `${url.pathname}_w${worker}`;
    process.env[key] = url.toString();
  }
}

// Audit checkpoints name their database by server and name, and the suite's databases are dropped
// and created again under the same names: each test file keeps its own checkpoint file.
process.env.DLQ_AUDIT_CHECKPOINTS ??= path.join(tmpdir(), `dlq-audit-checkpoints-${process.pid}-${Date.now()}.jsonl`);
