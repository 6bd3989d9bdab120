import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testActors, useConsoleConfig } from "@/test/console-config";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { redriveHandler } from "@/lib/redrive/handler";
import { assertGroupRepairUnmasked, previewGroupRepair } from "@/lib/redrive/repair-preview";
import { getRedrive, planRedrive, startBulk, startRedrive } from "@/lib/redrive/use-cases";
import { scanHandler } from "@/lib/triage/scan";
import { toActionError } from "@/lib/errors";
import type { PayloadPatch } from "./patch";
import { planRepair, repairLetter } from "./use-cases";

/**
 * Repair previews and plans must not bypass the audited reveal, on the real RabbitMQ and
 * Postgres with the default masking rules (which mask card numbers, CVVs and authorization headers
 * for admins too). For every preview and plan, a right and a wrong guess of a masked value get the
 * same answer, for an admin who has not revealed and for an operator; a value copied or moved from
 * a masked field is shown masked; a test or an edit of a masked value is refused in the operator's
 * words; the audit rows record the operations and paths, never the values; and the audit rows of a
 * repair that ran hold no masked value.
 */
const ON = "masked-repair";
const CARD = "4111111111111111";
const WRONG_CARD = "4000000000000002";
/**
 * Not digits alone: "no masked value, whole or in part" is checked as a substring, and four digits
 * turn up by chance in the digests, hashes and ids of a long run (one did). The field's name is
 * what masks it, whatever it holds.
 */
const CVV = "Q5309V";
const WRONG_CVV = "Q1234V";
const TOKEN = "Bearer qwertyuiopasdfghjklzxcvb";
const CLASS = "com.acme.payments.CardDeclined";
const meta = () => ({ requestId: `mr-${randomUUID()}`, ip: "127.0.0.1" });
const enc = (s: string) => new TextEncoder().encode(s);
const actors: Record<"operator" | "admin", Actor> = {} as never;
const kit = new RabbitKit();
let consoleConfig: Awaited<ReturnType<typeof useConsoleConfig>>;

const order = (i: number, cvv = CVV) => ({
  order: i,
  note: "call back",
  customer: { name: "Ann", card: { number: CARD, cvv } },
});
const body = (i: number) => JSON.stringify(order(i));
const ops = (...operations: Array<Record<string, unknown>>): PayloadPatch => ({ kind: "json-patch", operations });
/** No masked value, whole or in part, in a text the role is shown or the audit log keeps. */
const leaksNothing = (v: unknown) => {
  const text = JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? String(x) : x));
  expect(text).not.toContain(CARD);
  expect(text).not.toContain(CVV);
  expect(text).not.toContain("qwertyuiop");
};

beforeAll(async () => {
  consoleConfig = await useConsoleConfig({
    connections: [testConfig({ id: ON })],
    repair: [{ connection: ON, queue: `${kit.prefix}.dlq.*` }],
  });
  Object.assign(actors, await testActors("masked-repair.test", ["operator", "admin"]));
});

afterAll(async () => {
  await kit.cleanup();
  await consoleConfig.restore();
});

/** Three letters of one group with a card, dead-lettered for real and scanned into the index. */
async function seeded() {
  const { dlq, source } = await kit.dlqByReject(
    [0, 1, 2].map((i) => ({
      body: enc(body(i)),
      messageId: `m-${i}`,
      headers: { "x-exception-class": CLASS, authorization: TOKEN },
    })),
  );
  const kind = `scan-mr-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({ kind: kind as "scan", connectionId: ON, queue: dlq, params: {} });
  await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: `scan-${kind}`, leaseMs: 10_000 }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
  const [{ group_key: groupKey }] = await getDb().$queryRawUnsafe<Array<{ group_key: string }>>(
    `SELECT DISTINCT group_key FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL`,
    ON,
    dlq,
  );
  const { adapterFor } = await import("@/lib/use-case/connection");
  const page = await adapterFor(ON).browse(dlq, { offset: 0, limit: 10 });
  const letterId = page.letters.find((l) => l.messageId === "m-1")!.id;
  return { dlq, source, selection: { kind: "group" as const, groupKey }, letterId };
}

/** What the browser would get: the data, or the code and the operator's words. */
async function answer<T>(work: () => Promise<T>): Promise<unknown> {
  try {
    return { ok: true, data: await work() };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}

const requestRows = (requestId: string) =>
  getDb().auditEvent.findMany({ where: { requestId }, orderBy: { id: "asc" } });

let fixture: Awaited<ReturnType<typeof seeded>>;
beforeAll(async () => {
  fixture = await seeded();
});

describe("the group repair preview", () => {
  const pairs: Array<[string, PayloadPatch, PayloadPatch]> = [
    [
      "a test of the card number",
      ops({ op: "test", path: "/customer/card/number", value: CARD }),
      ops({ op: "test", path: "/customer/card/number", value: WRONG_CARD }),
    ],
    [
      "a test of the CVV before a harmless change",
      ops({ op: "test", path: "/customer/card/cvv", value: CVV }, { op: "replace", path: "/note", value: "done" }),
      ops(
        { op: "test", path: "/customer/card/cvv", value: WRONG_CVV },
        { op: "replace", path: "/note", value: "done" },
      ),
    ],
    [
      "a test of the whole card",
      ops({ op: "test", path: "/customer/card", value: { number: CARD, cvv: CVV } }),
      ops({ op: "test", path: "/customer/card", value: { number: CARD, cvv: WRONG_CVV } }),
    ],
    [
      "a replace of the CVV",
      ops({ op: "replace", path: "/customer/card/cvv", value: CVV }),
      ops({ op: "replace", path: "/customer/card/cvv", value: WRONG_CVV }),
    ],
    [
      "a merge patch of the CVV",
      { kind: "merge-patch", patch: { customer: { card: { cvv: CVV } } } },
      { kind: "merge-patch", patch: { customer: { card: { cvv: WRONG_CVV } } } },
    ],
  ];

  for (const [what, right, wrong] of pairs) {
    it(`answers ${what} the same for a right and a wrong guess (an admin without a reveal, an operator)`, async () => {
      const { dlq, selection } = fixture;
      for (const role of ["admin", "operator"] as const) {
        const ask = (patch: PayloadPatch) =>
          answer(() => previewGroupRepair(actors[role], meta(), { connectionId: ON, queue: dlq, selection, patch }));
        const [a, b] = [await ask(right), await ask(wrong)];
        expect(a, role).toEqual(b);
        expect(a).toMatchObject({
          ok: false,
          error: { code: role === "admin" ? "forbidden:repair-masked" : "forbidden:letter:repair" },
        });
        leaksNothing(a);
      }
    });
  }

  it("refuses a test of a masked value in the operator's words, and audits the operations and paths, not the values", async () => {
    const { dlq, selection } = fixture;
    const m = meta();
    const r = await answer(() =>
      previewGroupRepair(actors.admin, m, {
        connectionId: ON,
        queue: dlq,
        selection,
        patch: ops({ op: "test", path: "/customer/card/number", value: CARD }),
      }),
    );
    expect(r).toMatchObject({
      ok: false,
      error: {
        code: "forbidden:repair-masked",
        message: expect.stringMatching(
          /^Operation 1 \(test \/customer\/card\/number\) compares a value that masking hides from your role\. A group repair cannot test or change values that masking hides.*in 3 of the 3 letters\..*reveal the letter/,
        ),
      },
    });
    const rows = await requestRows(m.requestId);
    expect(rows.map((x) => [x.action, x.outcome])).toEqual([["redrive.repair_preview", "denied"]]);
    expect(rows[0].details).toEqual({
      error: "forbidden:repair-masked",
      patch: { kind: "json-patch", operations: [{ op: "test", path: "/customer/card/number" }] },
    });
    leaksNothing(rows);
  });

  it("shows a value copied or moved from a masked field masked in the diff, and audits the operations and paths", async () => {
    const { dlq, selection } = fixture;
    const m = meta();
    const preview = await previewGroupRepair(actors.admin, m, {
      connectionId: ON,
      queue: dlq,
      selection,
      patch: ops(
        { op: "copy", from: "/customer/card/cvv", path: "/note" },
        { op: "move", from: "/customer/card/number", path: "/ref" },
      ),
    });
    expect(preview).toMatchObject({ total: 3, applies: 3, doesNotApply: 0 });
    leaksNothing(preview);
    for (const l of preview.letters) {
      expect(l).toMatchObject({ applies: true, unchanged: false, reason: null });
      expect(l.diff).toMatchObject({ kind: "json" });
      const entries = l.diff?.kind === "json" ? l.diff.entries : [];
      expect(entries).toEqual(
        expect.arrayContaining([
          { op: "change", path: "/note", before: '"call back"', after: '"[hidden]"', masked: true },
          { op: "add", path: "/ref", after: '"****1111"', masked: true },
          { op: "remove", path: "/customer/card/number", before: '"****1111"', masked: true },
        ]),
      );
    }
    const rows = await requestRows(m.requestId);
    expect(rows.map((x) => [x.action, x.outcome])).toEqual([["redrive.repair_preview", "success"]]);
    expect(rows[0].details).toEqual({
      scope: "group",
      patch: {
        kind: "json-patch",
        operations: [
          { op: "copy", path: "/note", from: "/customer/card/cvv" },
          { op: "move", path: "/ref", from: "/customer/card/number" },
        ],
      },
      total: 3,
      applies: 3,
      doesNotApply: 0,
    });
    // A patch's own values are never recorded either.
    const n = meta();
    await previewGroupRepair(actors.admin, n, {
      connectionId: ON,
      queue: dlq,
      selection,
      patch: ops({ op: "add", path: "/note", value: "written-value-not-for-the-log" }),
    });
    const written = await requestRows(n.requestId);
    expect(written).toHaveLength(1);
    expect(JSON.stringify(written[0].details)).not.toContain("written-value-not-for-the-log");
  });
});

describe("the single-letter repair plan", () => {
  const edits: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    [
      "the payload with the CVV as it is or changed",
      { body: { kind: "json", text: body(1) } },
      { body: { kind: "json", text: JSON.stringify(order(1, WRONG_CVV)) } },
    ],
    [
      "the masked authorization header as it is or changed",
      { setHeaders: { authorization: TOKEN } },
      { setHeaders: { authorization: "Bearer wrongwrongwrongwrongwrong" } },
    ],
  ];

  for (const [what, right, wrong] of edits) {
    it(`answers ${what} the same (an admin without a reveal, an operator)`, async () => {
      const { dlq, letterId } = fixture;
      for (const role of ["admin", "operator"] as const) {
        const ask = (edit: Record<string, unknown>) =>
          answer(() => planRepair(actors[role], meta(), { connectionId: ON, queue: dlq, letterId, ...edit }));
        const [a, b] = [await ask(right), await ask(wrong)];
        expect(a, role).toEqual(b);
        leaksNothing(a);
        if (role === "operator") expect(a).toMatchObject({ ok: false, error: { code: "forbidden:letter:repair" } });
        else {
          expect(a).toMatchObject({ ok: true, data: { ok: false, diff: { payload: { kind: "unchanged" } } } });
          const problems = (a as { data: { problems: Array<{ message: string }> } }).data.problems;
          expect(problems.map((p) => p.message).join(" ")).toMatch(/reveal (it|the letter) first/);
        }
      }
    });
  }

  it("lets an admin edit masked values with a reveal in the request (audited with its reason); the plan's audit row has paths, not values", async () => {
    const { dlq, letterId } = fixture;
    const m = meta();
    const plan = await planRepair(actors.admin, m, {
      connectionId: ON,
      queue: dlq,
      letterId,
      body: { kind: "json", text: JSON.stringify(order(1, WRONG_CVV)) },
      setHeaders: { "x-note": "checked" },
      reveal: { reason: "The CVV was keyed wrongly by the checkout (INC-9)" },
    });
    expect(plan.ok, JSON.stringify(plan.problems)).toBe(true);
    expect(plan.diff.payload).toMatchObject({
      kind: "json",
      entries: [{ op: "change", path: "/customer/card/cvv", masked: true }],
    });
    leaksNothing(plan);
    const rows = await requestRows(m.requestId);
    expect(rows.map((x) => [x.action, x.outcome])).toEqual([
      ["payload.reveal", "success"],
      ["letter.repair_plan", "success"],
    ]);
    expect(rows[0].details).toMatchObject({
      reason: "The CVV was keyed wrongly by the checkout (INC-9)",
      for: "letter.repair_plan",
    });
    expect(rows[1].details).toMatchObject({
      ok: true,
      edit: {
        payload: { kind: "json", changes: [{ op: "change", path: "/customer/card/cvv" }] },
        setHeaders: ["x-note"],
        removeHeaders: [],
        revealed: true,
      },
    });
    leaksNothing(rows);
    expect(JSON.stringify(rows.map((x) => x.details))).not.toContain(WRONG_CVV);
  });

  it("an operator asking for a reveal is refused before anything is read or revealed (one denial)", async () => {
    const { dlq, letterId } = fixture;
    const m = meta();
    await expect(
      planRepair(actors.operator, m, {
        connectionId: ON,
        queue: dlq,
        letterId,
        reveal: { reason: "I would like to see the card number" },
      }),
    ).rejects.toMatchObject({ code: "forbidden:letter:repair" });
    expect((await requestRows(m.requestId)).map((x) => [x.action, x.outcome])).toEqual([
      ["letter.repair_plan", "denied"],
    ]);
  });
});

describe("a repair that ran", () => {
  it("one letter, revealed, with masked values copied into the note and a header: its audit rows hold no masked value", async () => {
    const { dlq, letterId } = fixture;
    const edited = { ...order(1), note: `card ${CARD} cvv ${CVV}` };
    const r = await repairLetter(actors.admin, meta(), {
      connectionId: ON,
      queue: dlq,
      letterId,
      body: { kind: "json", text: JSON.stringify(edited) },
      setHeaders: { "x-copied": `was ${TOKEN}` },
      reveal: { reason: "Customer asked to keep the card on the note (INC-10)" },
      reason: "Card details moved to the note for the manual desk, INC-10",
    });
    expect(r.outcome).toBe("moved");
    const rows = await getDb().auditEvent.findMany({ where: { operationId: r.operationId } });
    expect(rows.map((x) => x.action).sort()).toEqual(["letter.repair", "letter.repaired"]);
    const repaired = rows.find((x) => x.action === "letter.repaired")!;
    expect(JSON.stringify(repaired.details)).toContain("/note");
    expect(JSON.stringify(repaired.details)).toContain("x-copied");
    leaksNothing(rows);
  });

  it("a group repair that copies the CVV: the start, the ledger and the letter.repaired rows hold no masked value", async () => {
    const { dlq, selection } = await seeded();
    const repair = {
      patch: ops({ op: "copy", from: "/customer/card/cvv", path: "/note" }),
      reason: "The desk reads the note, INC-11",
    };
    const input = {
      connectionId: ON,
      queue: dlq,
      selection,
      repair,
      fix: "desk tooling 1.2",
      confirmedCount: 3,
      watchSeconds: 1,
      sample: { count: 1 },
      rate: 50,
    };
    const m = meta();
    await assertGroupRepairUnmasked(actors.admin, m, input);
    const started = await startRedrive(actors.admin, m, input);
    const worker = () =>
      new JobWorker({
        handlers: { redrive: redriveHandler({ returnCheckMs: 300, verifyGraceMs: 1000 }) },
        owner: `mr-${randomUUID().slice(0, 6)}`,
        leaseMs: 10_000,
        pollMs: 50,
        scope: { jobIds: [started.id] },
      });
    await worker().runOnce();
    await startBulk(actors.admin, meta(), {
      jobId: started.id,
      continueAnywayReason: "Nobody consumes the origin in this test",
    });
    await worker().runOnce();
    const done = await getRedrive(actors.admin, meta(), { jobId: started.id, limit: 100 });
    expect(done.redrive.state).toBe("succeeded");
    expect(done.counts).toMatchObject({ moved: 3 });
    leaksNothing(done.ledger);
    const rows = await getDb().auditEvent.findMany({ where: { operationId: started.id } });
    const repaired = rows.filter((x) => x.action === "letter.repaired");
    expect(repaired).toHaveLength(3);
    for (const x of repaired)
      expect((x.details as { diff: unknown }).diff).toMatchObject({
        payload: {
          kind: "json",
          entries: [{ op: "change", path: "/note", before: '"call back"', after: '"[hidden]"', masked: true }],
        },
      });
    leaksNothing(rows);
  }, 120_000);

  it("refuses to start a group repair that tests a masked value, the same for a right and a wrong guess, audited; nothing is created", async () => {
    const { dlq, selection } = fixture;
    const start = (value: string) => {
      const m = meta();
      const input = {
        connectionId: ON,
        queue: dlq,
        selection,
        repair: {
          patch: ops({ op: "test", path: "/customer/card/cvv", value }, { op: "replace", path: "/note", value: "x" }),
          reason: "Guessing, INC-12",
        },
        fix: "none",
        confirmedCount: 3,
      };
      return { m, result: answer(() => assertGroupRepairUnmasked(actors.admin, m, input)) };
    };
    const right = start(CVV);
    const wrong = start(WRONG_CVV);
    const [a, b] = [await right.result, await wrong.result];
    expect(a).toEqual(b);
    expect(a).toMatchObject({ ok: false, error: { code: "forbidden:repair-masked" } });
    const rows = await requestRows(right.m.requestId);
    expect(rows.map((x) => [x.action, x.outcome])).toEqual([["redrive.start", "denied"]]);
    expect(rows[0].details).toMatchObject({
      error: "forbidden:repair-masked",
      patch: {
        kind: "json-patch",
        operations: [
          { op: "test", path: "/customer/card/cvv" },
          { op: "replace", path: "/note" },
        ],
      },
    });
    leaksNothing(rows);
    expect(await getDb().redrivePlan.count({ where: { queue: dlq } })).toBe(0);
  });

  it("the redrive's own plan and start (the form and the v1 API) refuse the same patch: a right and a wrong guess get the same refusal, audited, nothing created", async () => {
    const { dlq, selection } = fixture;
    const input = (value: string) => ({
      connectionId: ON,
      queue: dlq,
      selection,
      repair: {
        patch: ops({ op: "test", path: "/customer/card/cvv", value }, { op: "replace", path: "/note", value: "x" }),
        reason: "Guessing, INC-13",
      },
      fix: "none",
      confirmedCount: 3,
    });
    const calls: Array<[(a: Actor, m: RequestMeta, i: unknown) => Promise<unknown>, string]> = [
      [planRedrive, "redrive.plan"],
      [startRedrive, "redrive.start"],
    ];
    for (const [call, action] of calls) {
      const rm = meta();
      const wm = meta();
      const [a, b] = [
        await answer(() => call(actors.admin, rm, input(CVV))),
        await answer(() => call(actors.admin, wm, input(WRONG_CVV))),
      ];
      expect(a).toEqual(b);
      expect(a).toMatchObject({ ok: false, error: { code: "forbidden:repair-masked" } });
      const rows = await requestRows(rm.requestId);
      expect(rows.map((x) => [x.action, x.outcome])).toEqual([[action, "denied"]]);
      leaksNothing(rows);
    }
    expect(await getDb().redrivePlan.count({ where: { queue: dlq } })).toBe(0);
  });
});
