/**
 * Redrive engine benchmarks on RabbitMQ, one run, fresh Postgres database (smoke: 2 s at 100 and
 * 500/s, 1,000 letters unthrottled):
 *  (1) achieved rate at targets of 100 and 1,000 letters/s over BENCH_SECONDS (default 30) vs the target;
 *  (2) unthrottled engine (rate 100,000/s) vs a bare consume → confirm-publish → ack loop on the
 *      same broker, same letter count (BENCH_UNTHROTTLED, default 20,000);
 *  (3) the same letters moved by RabbitMQ's own dynamic shovel (ack-mode on-confirm, DLQ → target,
 *      created through the management API): time until the DLQ is empty and the target full.
 * The engine's numbers include its ledger writes and one audit row per letter (batched). The run
 * goes on in a child process with the console's Node options (bench/console-options.ts), the bare
 * loops included.
 *   npm run bench:redrive-rate
 *   (BENCH_SECONDS, BENCH_UNTHROTTLED, BENCH_RATES="100,1000"; BENCH_ENGINE_IN_FLIGHT="0,512" runs the
 *   engine twice: with the engine's own window (moveWindowFor: 64 at 100/s, 250 at 1,000/s, 512 unthrottled),
 *   then with maxInFlight forced to 512 in every run). Against another local node: DLQ_TEST_AMQP_PORT,
 *   DLQ_TEST_RABBITMQ_MGMT_PORT. BENCH_PROFILE=file.cpuprofile profiles the unthrottled engine run
 *   (file.heapprofile: its allocations).
 *   BENCH_EXPLAIN=ms: the bench database's sessions log the plan (EXPLAIN ANALYZE, BUFFERS) of every
 *   statement that takes at least ms milliseconds to the server's log (auto_explain; needs a superuser).
 */
import { createHmac, createSecretKey, randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { availableParallelism } from "node:os";
import amqp from "amqplib";
import { GENESIS_HASH } from "../lib/audit/hash";
import { RabbitMqAdapter } from "../lib/brokers/rabbitmq/adapter";
import { AMQP_URL, testConfig } from "../lib/brokers/rabbitmq/test-kit";
import { batchSizeFor } from "../lib/redrive/token-bucket";
import { applyMigrations } from "../scripts/lib/migrations";
import { createTestDatabase } from "../scripts/lib/test-database";
import { copyIn, copyLines } from "./copy-floor";
import { besideLine, measureBeside } from "./beside";
import { asConsole } from "./console-options";
import { cpuNow, cpuSince, perLetter, type Cpu } from "./cpu";
import { bareMove, fill } from "./redrive-common";
import { report, size, sizes } from "./report";
import { MANAGED_HEADERS } from "../lib/connections/managed-headers";

/** The machine's RabbitMQ, or another local node (DLQ_TEST_AMQP_PORT, see test-kit). */
const AMQP = AMQP_URL;
const SECONDS = size("BENCH_SECONDS", 30, 2);
const UNTHROTTLED = size("BENCH_UNTHROTTLED", 20_000, 1_000);
const RATES = sizes("BENCH_RATES", "100,1000", "100,500").map(Number);
/** Engine runs with MoveOptions.maxInFlight forced to this (the mover's crash window); 0: the engine's own (moveWindowFor). */
const ENGINE_IN_FLIGHT = sizes("BENCH_ENGINE_IN_FLIGHT", "0", "0").map(Number);

/**
 * BENCH_PROFILE=file.cpuprofile: a V8 CPU profile of the unthrottled engine run only (open it in
 * Chrome DevTools); file.heapprofile: what that run allocates, sampled, collected objects included.
 */
const PROFILE = process.env.BENCH_PROFILE;
const EXPLAIN_MS = process.env.BENCH_EXPLAIN;

async function startProfile(): Promise<{ stop(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
  const heap = PROFILE?.endsWith(".heapprofile");
  if (heap) {
    // What the run allocates, collected or not (sampled every 16 KB): where its gc work comes from.
    await post("HeapProfiler.enable");
    await post("HeapProfiler.startSampling", {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  } else {
    await post("Profiler.enable");
    await post("Profiler.setSamplingInterval", { interval: 100 });
    await post("Profiler.start");
  }
  return {
    async stop(file) {
      const { profile } = (await post(heap ? "HeapProfiler.stopSampling" : "Profiler.stop")) as { profile: unknown };
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      console.log(`  ${heap ? "allocation" : "CPU"} profile of the unthrottled engine run: ${file}`);
    },
  };
}

const MGMT =
  process.env.RABBITMQ_MANAGEMENT_URL ??
  `http://guest:guest@127.0.0.1:${process.env.DLQ_TEST_RABBITMQ_MGMT_PORT ?? "15672"}`;

async function mgmt(method: string, path: string, body?: unknown): Promise<Response> {
  const u = new URL(MGMT);
  const auth = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString("base64");
  u.username = "";
  u.password = "";
  const res = await fetch(new URL(`/api${path}`, u), {
    method,
    headers: { authorization: `Basic ${auth}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok && res.status !== 404)
    throw new Error(`management API ${method} ${path}: ${res.status} ${await res.text()}`);
  return res;
}

/** RabbitMQ's dynamic shovel moving n letters DLQ → target (on-confirm): letters/s until the DLQ is empty, and the CPU it took. */
async function shovelRate(ch: amqp.ConfirmChannel, n: number): Promise<{ rate: number; cpu: Cpu }> {
  const dlq = `bench.redrive.shovel.${randomUUID().slice(0, 6)}`;
  const target = `${dlq}.target`;
  await fill(ch, dlq, n);
  await ch.assertQueue(target, { durable: true });
  const name = `bench-${randomUUID().slice(0, 6)}`;
  const c0 = cpuNow();
  const t0 = performance.now();
  await mgmt("PUT", `/parameters/shovel/%2F/${name}`, {
    value: {
      "src-protocol": "amqp091",
      "src-uri": "amqp://",
      "src-queue": dlq,
      "dest-protocol": "amqp091",
      "dest-uri": "amqp://",
      "dest-queue": target,
      "ack-mode": "on-confirm",
      "src-delete-after": "never",
    },
  });
  try {
    for (;;) {
      const [d, t] = [await ch.checkQueue(dlq), await ch.checkQueue(target)];
      if (d.messageCount === 0 && t.messageCount >= n) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const rate = n / ((performance.now() - t0) / 1000);
    return { rate, cpu: await cpuSince(c0) };
  } finally {
    await mgmt("DELETE", `/parameters/shovel/%2F/${name}`);
    await ch.deleteQueue(dlq);
    await ch.deleteQueue(target);
  }
}

/**
 * The least any redrive must write to Postgres per letter, by a bare writer, after the engine's run
 * of `jobId`: the run's own audit rows (one per letter, DESIGN.md "Access and audit") COPYed into a
 * copy of audit_log with its indexes, and one new version of each of the job's ledger rows (the
 * letter recorded moved, as a resumed job must know) by one UPDATE per batch of a copy of
 * redrive_letters as populateLedger leaves it (same fillfactor), each batch in its own transaction,
 * batches of the engine's unthrottled size. No lease, no chain, no MAC, no claim: the engine's
 * writes less everything that is not a row. Returns the writer's CPU (this process and the bench
 * database's backends) and the rows written.
 *
 * `design`: the same, plus what DESIGN.md's rules add to those rows, each in its least form, so the
 * floor is that of a redrive this product may ship, not of any redrive:
 * - the claim ("Redrive": a durable job that resumes from its ledger, one holder at a time): before
 *   a batch is sent, its rows are recorded as being sent and that is committed (one UPDATE per
 *   batch returning each row's id and letter id, its own transaction), so a run that stops mid-batch
 *   is told from one that never sent, and a second holder does not send them again;
 * - the chain ("Access and audit": each row chained to the previous by hash): each audit row's
 *   hash is an HMAC-SHA256 over the previous row's hash and the row's own text, made in order under
 *   a transaction-scoped lock (`pg_advisory_xact_lock`), the chain's head read once per batch;
 * - the lease: the batch's write checks a row lock (`FOR KEY SHARE` on a row of its own) first.
 */
async function writeFloor(
  url: string,
  jobId: string,
  design = false,
): Promise<{ cpu: Cpu; secs: number; audit: number; ledger: number }> {
  const { Client } = await import("pg");
  const client = new Client({ connectionString: url });
  await client.connect();
  const drop = () =>
    client
      .query("DROP TABLE IF EXISTS bench_floor_audit, bench_floor_ledger, bench_floor_lease")
      .catch(() => undefined);
  try {
    const text = { getTypeParser: () => (v: string) => v };
    const cols = await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'audit_log' AND column_name <> 'id' ORDER BY ordinal_position`,
    );
    const columns = cols.rows.map((r) => r.column_name);
    const audit = await client.query<Array<string | null>>({
      text: `SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM audit_log WHERE operation_id = $1::uuid AND scope = 'letter' ORDER BY id`,
      values: [jobId],
      rowMode: "array",
      types: text,
    });
    const [{ options }] = (
      await client.query<{ options: string[] | null }>(
        `SELECT reloptions AS options FROM pg_class WHERE relname = 'redrive_letters'`,
      )
    ).rows;
    await drop();
    await client.query("CREATE TABLE bench_floor_audit (LIKE audit_log INCLUDING ALL)");
    await client.query("CREATE TABLE bench_floor_lease AS SELECT 1 AS id");
    await client.query(
      `CREATE TABLE bench_floor_ledger (LIKE redrive_letters INCLUDING ALL)${options?.length ? ` WITH (${options.join(", ")})` : ""}`,
    );
    await client.query(
      "INSERT INTO bench_floor_ledger SELECT * FROM redrive_letters WHERE job_id = $1::uuid ORDER BY seq",
      [jobId],
    );
    // As populateLedger leaves a job: every row pending, none moved; then compacted and analyzed.
    await client.query("UPDATE bench_floor_ledger SET state = 'pending', moved_at = NULL, attempts = 0");
    await client.query("VACUUM FULL ANALYZE bench_floor_ledger");
    const ids = (
      await client.query<{ id: string }>({ text: "SELECT id FROM bench_floor_ledger ORDER BY seq", types: text })
    ).rows.map((r) => r.id);
    const batch = batchSizeFor(100_000);
    const copy = `COPY bench_floor_audit (${columns.map((c) => `"${c}"`).join(", ")}) FROM STDIN`;
    const prevAt = columns.indexOf("prev_hash");
    const hashAt = columns.indexOf("hash");
    const key = createSecretKey(randomBytes(32));
    let head = GENESIS_HASH;
    const c0 = cpuNow();
    const t0 = performance.now();
    for (let i = 0; i < ids.length; i += batch) {
      const batchIds = ids.slice(i, i + batch);
      if (design) {
        await client.query("BEGIN");
        await client.query("SELECT 1 FROM bench_floor_lease FOR KEY SHARE");
        const claimed = await client.query({
          text: "UPDATE bench_floor_ledger SET state = 'moving', attempts = attempts + 1, updated_at = now() WHERE id = ANY ($1::bigint[]) RETURNING id, letter_id",
          values: [batchIds],
          rowMode: "array",
          types: text,
        });
        if (claimed.rows.length !== batchIds.length) throw new Error("the floor's claim missed rows");
        await client.query("COMMIT");
      }
      await client.query("BEGIN");
      if (design) await client.query("SELECT 1 FROM bench_floor_lease FOR KEY SHARE");
      await client.query(
        "UPDATE bench_floor_ledger SET state = 'moved', moved_at = now(), updated_at = now() WHERE id = ANY ($1::bigint[])",
        [batchIds],
      );
      let rows = audit.rows.slice(i, i + batch);
      if (design) {
        await client.query("SELECT pg_advisory_xact_lock(7340034)");
        const last = await client.query<{ hash: string }>(
          "SELECT hash FROM bench_floor_audit ORDER BY id DESC LIMIT 1",
        );
        head = last.rows[0]?.hash ?? head;
        rows = rows.map((row) => {
          const r = row.slice();
          r[prevAt] = head;
          r[hashAt] = "";
          head = createHmac("sha256", key).update(head).update(r.join("\t")).digest("hex");
          r[hashAt] = head;
          return r;
        });
      }
      if (rows.length > 0) await copyIn(client, copy, copyLines(rows));
      await client.query("COMMIT");
    }
    const secs = (performance.now() - t0) / 1000;
    const cpu = await cpuSince(c0);
    const [{ n }] = (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM bench_floor_audit")).rows;
    if (n !== audit.rows.length) throw new Error(`bench_floor_audit holds ${n} of ${audit.rows.length} rows`);
    return { cpu, secs, audit: audit.rows.length, ledger: ids.length };
  } finally {
    await drop();
    await client.end();
  }
}

async function main() {
  // The whole run (anchors and the console's code alike) in a process with the console's Node options.
  if (await asConsole("bench/redrive-rate.ts")) return;
  const pg = await createTestDatabase("dlq_bench_redrive");
  await applyMigrations({ databaseUrl: pg.url });
  if (EXPLAIN_MS) {
    const { Client } = await import("pg");
    const c = new Client({ connectionString: pg.url });
    await c.connect();
    for (const [k, v] of [
      ["session_preload_libraries", "auto_explain"],
      ["auto_explain.log_min_duration", String(Number(EXPLAIN_MS))],
      ["auto_explain.log_analyze", "on"],
      ["auto_explain.log_buffers", "on"],
    ])
      await c.query(`ALTER DATABASE "${pg.name}" SET ${k} = '${v}'`);
    await c.end();
  }
  process.env.DATABASE_URL = pg.url;
  const { getDb } = await import("../lib/db");
  const { JobWorker } = await import("../lib/jobs/worker");
  const { jobStore } = await import("../lib/jobs/store");
  const { scanHandler } = await import("../lib/triage/scan");
  const { redriveHandler } = await import("../lib/redrive/handler");
  const { populateLedger } = await import("../lib/redrive/ledger");
  const { createUser } = await import("../lib/auth/users");
  // A redrive runs only for an enabled user who may run it (lib/redrive/runner-check.ts).
  const benchUser = await createUser({
    email: `bench-${randomUUID().slice(0, 8)}@local.test`,
    role: "admin",
    password: "bench-only-password",
  });

  const conn = await amqp.connect(AMQP);
  const ch = await conn.createConfirmChannel();
  const db = getDb();

  /** Fills a DLQ, scans it, runs one bulk-stage redrive to a target queue; returns letters/s. */
  async function engine(
    n: number,
    rate: number,
    inFlight: number,
  ): Promise<{ jobId: string; moved: number; secs: number; rate: number; moverShare: number; cpu: Cpu }> {
    const dlq = `bench.redrive.dlq.${randomUUID().slice(0, 6)}`;
    const target = `${dlq}.target`;
    const adapter = new RabbitMqAdapter(testConfig({ id: "bench-rmq", dlqs: [{ name: dlq }], discover: false }), {
      allManagedHeaders: MANAGED_HEADERS,
    });
    // Time spent inside moveLetters (call to last result), to tell the adapter's share from the engine's.
    let moverMs = 0;
    const timed: typeof adapter = Object.assign(Object.create(adapter) as typeof adapter, {
      moveLetters: async function* (...[queue, reqs, opts]: Parameters<typeof adapter.moveLetters>) {
        const t = performance.now();
        try {
          yield* adapter.moveLetters(queue, reqs, inFlight ? { ...opts, maxInFlight: inFlight } : opts);
        } finally {
          moverMs += performance.now() - t;
        }
      },
    });
    await fill(ch, dlq, n, { "x-exception-class": "bench.Failure" });
    await ch.deleteQueue(target);
    await ch.assertQueue(target, { durable: true });
    const scanKind = `scan-${randomUUID().slice(0, 6)}`;
    await jobStore().enqueue({ kind: scanKind as "scan", connectionId: adapter.connectionId, queue: dlq });
    const scanned = await new JobWorker({
      handlers: { [scanKind]: scanHandler({ adapterFor: () => adapter }) },
      owner: "bench-scan",
    }).runOnce();
    const scanJob = (await jobStore().get(scanned!.id))!;
    if (scanJob.state !== "succeeded") throw new Error(`scan ${scanJob.state}: ${scanJob.error}`);
    const job = await db.job.create({ data: { kind: "redrive", connectionId: adapter.connectionId, queue: dlq } });
    const total = await populateLedger(db, job.id, { connectionId: adapter.connectionId, queue: dlq });
    await db.redrivePlan.create({
      data: {
        jobId: job.id,
        connectionId: adapter.connectionId,
        queue: dlq,
        selection: { kind: "filter", filter: {} },
        target: { kind: "queue", name: target },
        fix: "bench",
        sampleSize: 1,
        watchSeconds: 1,
        rate,
        redriveLimit: 3,
        parking: { kind: "mark" },
        breakerThreshold: 0.1,
        breakerWindow: 200,
        breakerMinLetters: 20,
        total,
        stage: "bulk",
        createdById: benchUser.id,
        createdByEmail: benchUser.email,
        createdByRole: "admin",
      },
    });
    const worker = new JobWorker({
      handlers: { redrive: redriveHandler({ adapterFor: () => timed, returnCheckMs: 3_600_000 }) },
      owner: "bench-redrive",
      leaseMs: 60_000,
    });
    const c0 = cpuNow();
    const profiling = PROFILE && rate >= 100_000 ? await startProfile() : null;
    const beside = measureBeside(() => db.$queryRawUnsafe("SELECT 1"));
    const t0 = performance.now();
    await worker.runOnce();
    const secs = (performance.now() - t0) / 1000;
    const cpu = await cpuSince(c0);
    console.log(`  ${besideLine(`redrive at ${rate.toLocaleString("en-US")}/s`, await beside.stop())}`);
    if (profiling) await profiling.stop(PROFILE!);
    const done = (await db.job.findUnique({ where: { id: job.id } }))!;
    if (done.state !== "succeeded") throw new Error(`redrive ${done.state}: ${done.error}`);
    const moved = Number((done.progress as { moved?: number }).moved ?? 0);
    await ch.deleteQueue(dlq);
    await ch.deleteQueue(target);
    await adapter.close();
    return { jobId: job.id, moved, secs, rate: moved / secs, moverShare: moverMs / 1000 / secs, cpu };
  }

  const windowWords = (w: number) => (w ? `, ${w} in flight` : "");
  for (const w of ENGINE_IN_FLIGHT) {
    for (const target of RATES) {
      const r = await engine(Math.round(target * SECONDS), target, w);
      console.log(
        `rate ${target}/s over ${SECONDS} s${windowWords(w)}: moved ${r.moved} in ${r.secs.toFixed(2)} s = ${r.rate.toFixed(1)}/s (${((r.rate / target - 1) * 100).toFixed(1)}% vs target); inside moveLetters ${(r.moverShare * 100).toFixed(0)}% of the time`,
      );
      report({
        operation: `redrive at ${target}/s for ${SECONDS} s${windowWords(w)}`,
        rate: { value: r.rate, unit: "letters/s" },
        anchor: { name: "target", value: target, unit: "letters/s" },
        cpu: { reading: r.cpu, letters: r.moved, broker: "rabbitmq" },
      });
    }
  }

  // Bare loop: consume (prefetch 1000) → confirm-publish → ack after the confirm.
  const bareDlq = `bench.redrive.bare.${randomUUID().slice(0, 6)}`;
  await fill(ch, bareDlq, UNTHROTTLED);
  const cBare = cpuNow();
  const bare = await bareMove(conn, ch, bareDlq, UNTHROTTLED);
  const bareCpu = await cpuSince(cBare);
  await ch.deleteQueue(bareDlq);
  await ch.deleteQueue(`${bareDlq}.target`);
  const { rate: shovel, cpu: shovelCpu } = await shovelRate(ch, UNTHROTTLED);
  console.log(`bare confirm-publish-then-ack ${bare.toFixed(0)}/s; shovel (on-confirm) ${shovel.toFixed(0)}/s`);
  console.log(`  CPU, bare loop: ${perLetter(bareCpu, UNTHROTTLED)}`);
  console.log(`  CPU, shovel:    ${perLetter(shovelCpu, UNTHROTTLED)}`);
  report({
    operation: `redrive: bare consume → confirm-publish → ack, ${UNTHROTTLED} letters`,
    rate: { value: bare, unit: "letters/s" },
    cpu: { reading: bareCpu, letters: UNTHROTTLED, broker: "rabbitmq" },
  });
  report({
    operation: "redrive: RabbitMQ's shovel (on-confirm)",
    rate: { value: shovel, unit: "letters/s" },
    anchor: { name: "bare loop", value: bare, unit: "letters/s" },
    cpu: { reading: shovelCpu, letters: UNTHROTTLED, broker: "rabbitmq" },
  });
  // What 0.8 of the bare rate allows: the machine's cores, shared by Node, Postgres and RabbitMQ.
  const cores = availableParallelism();
  console.log(
    `  at 0.8 of the bare rate, ${cores} cores allow at most ${Math.round((cores * 1e6) / (0.8 * bare))} µs of CPU per letter, all processes together`,
  );
  for (const w of ENGINE_IN_FLIGHT) {
    const eng = await engine(UNTHROTTLED, 100_000, w);
    console.log(
      `unthrottled${windowWords(w)}: engine ${eng.rate.toFixed(0)}/s, ratio to bare ${(eng.rate / bare).toFixed(2)}, to shovel ${(eng.rate / shovel).toFixed(2)}; inside moveLetters ${(eng.moverShare * 100).toFixed(0)}% of the time`,
    );
    console.log(`  CPU, engine:    ${perLetter(eng.cpu, eng.moved)}`);
    // The ledger's updates so far in this database, and how many were HOT (no index entry written:
    // the claim and the outcome are, migrations redrive_claim_hot and redrive_outcome_hot). An idle
    // backend sends its counters to the view only up to 10 s later (Postgres 15): read until every
    // update of this run is there (a claim and an outcome per letter), or for 12 s.
    const ledgerUpdates = () =>
      db.$queryRawUnsafe<Array<{ upd: bigint; hot: bigint }>>(
        `SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'redrive_letters'`,
      );
    let [upd] = await ledgerUpdates();
    for (
      let waited = 0;
      waited < 12_000 && Number(upd?.upd ?? 0) < 2 * UNTHROTTLED * (ENGINE_IN_FLIGHT.indexOf(w) + 1);
      waited += 500
    ) {
      await new Promise((r) => setTimeout(r, 500));
      [upd] = await ledgerUpdates();
    }
    if (upd) console.log(`  redrive_letters updates in this database: ${upd.upd}, of them HOT ${upd.hot}`);
    if (eng.moved !== UNTHROTTLED) throw new Error(`the engine moved ${eng.moved} of ${UNTHROTTLED} letters`);
    report({
      operation: `redrive, unthrottled${windowWords(w)}, ${UNTHROTTLED} letters`,
      rate: { value: eng.rate, unit: "letters/s" },
      anchor: { name: "bare loop", value: bare, unit: "letters/s" },
      cpu: { reading: eng.cpu, letters: eng.moved, broker: "rabbitmq" },
      note: `${(eng.rate / shovel).toFixed(2)} of the shovel`,
    });
    // The floor of the goal (console + Postgres per letter ≤ 0.5x the bare loop's whole CPU): the
    // bare loop's own Node plus the rows every redrive must write. Postgres is its backends here.
    const floor = await writeFloor(pg.url, eng.jobId);
    const designed = await writeFloor(pg.url, eng.jobId, true);
    for (const f of [floor, designed])
      if (f.audit !== UNTHROTTLED) throw new Error(`the engine wrote ${f.audit} audit rows for ${UNTHROTTLED} letters`);
    const us = (sec: number) => (sec * 1e6) / UNTHROTTLED;
    const bareWhole = us(bareCpu.node + bareCpu.broker);
    const least = us(bareCpu.node + floor.cpu.node + floor.cpu.postgresBackends);
    const leastDesigned = us(bareCpu.node + designed.cpu.node + designed.cpu.postgresBackends);
    const ours = us(eng.cpu.node + eng.cpu.postgresBackends);
    console.log(
      `  CPU, bare writes of the rows a redrive must keep (one ledger version + one audit row per letter): ${perLetter(floor.cpu, UNTHROTTLED)}`,
    );
    console.log(
      `  CPU, the same with the design's claim, chain and lease (a committed claim per batch, chained HMACs): ${perLetter(designed.cpu, UNTHROTTLED)}`,
    );
    console.log(
      `  console + Postgres (its backends) ${Math.round(ours)} µs per letter = ${(ours / bareWhole).toFixed(2)}x the bare loop's whole ${Math.round(bareWhole)} (goal 0.5x); ` +
        `its floor (the bare loop's Node + those writes) ${Math.round(least)} µs = ${(least / bareWhole).toFixed(2)}x, ` +
        `with the claim, chain and lease ${Math.round(leastDesigned)} µs = ${(leastDesigned / bareWhole).toFixed(2)}x; ` +
        `the console at ${(ours / least).toFixed(2)}x of its floor, ${(ours / leastDesigned).toFixed(2)}x of the design's`,
    );
    report({
      operation: `redrive: floor: bare writes of the ledger and audit rows, ${UNTHROTTLED} letters`,
      rate: { value: UNTHROTTLED / floor.secs, unit: "letters/s" },
      cpu: { reading: floor.cpu, letters: UNTHROTTLED, broker: "rabbitmq" },
    });
    report({
      operation: `redrive: floor with the claim, chain and lease, ${UNTHROTTLED} letters`,
      rate: { value: UNTHROTTLED / designed.secs, unit: "letters/s" },
      cpu: { reading: designed.cpu, letters: UNTHROTTLED, broker: "rabbitmq" },
    });
    report({
      operation: "redrive: console + Postgres CPU per letter (µs), against its floor (bare loop's Node + bare writes)",
      rate: { value: ours, unit: "µs" },
      anchor: { name: "floor", value: least, unit: "µs" },
      ratio: ours / least,
      note: `${(ours / bareWhole).toFixed(2)}x the bare loop's whole CPU (goal 0.5x); the floor alone ${(least / bareWhole).toFixed(2)}x, with the claim, chain and lease ${(leastDesigned / bareWhole).toFixed(2)}x`,
    });
    report({
      operation:
        "redrive: console + Postgres CPU per letter (µs), against the design's floor (claim, chain and lease too)",
      rate: { value: ours, unit: "µs" },
      anchor: { name: "design floor", value: leastDesigned, unit: "µs" },
      ratio: ours / leastDesigned,
    });
  }
  await conn.close();
  await db.$disconnect();
  const store = (await import("../lib/triage/index-store")) as { closeBulkPool?: () => Promise<void> };
  await store.closeBulkPool?.(); // the direct pools (scans' and ledgers' writes), before the database goes
  await pg.drop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
