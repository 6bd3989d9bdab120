import { tmpdir } from "node:os";
import path from "node:path";

// Integration tests run against the real Postgres and RabbitMQ on this machine.
// scripts/test.sh sets DATABASE_URL to a database it created for the run; this default lets a
// developer run `npx vitest run --project integration` after `scripts/test.sh` prepared it once.
process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/dlq_console_test";
process.env.RABBITMQ_URL ??= "amqp://guest:guest@127.0.0.1:5672";
process.env.RABBITMQ_MANAGEMENT_URL ??= "http://guest:guest@127.0.0.1:15672";
// Audit checkpoints name their database by server and name, and the suite's databases are dropped
// and created again under the same names: each test file keeps its own checkpoint file.
process.env.DLQ_AUDIT_CHECKPOINTS ??= path.join(tmpdir(), `dlq-audit-checkpoints-${process.pid}-${Date.now()}.jsonl`);
