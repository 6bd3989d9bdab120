import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryAudit } from "@/lib/audit";
import type { Actor } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { RabbitKit, testConfig as rabbitConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { canonicalJson } from "@/lib/brokers/display";
import { isMutableHeader } from "@/lib/brokers/rabbitmq/identity";
import { jobStore } from "@/lib/jobs/store";
import { groupKeyOf } from "./grouping";
import { JobWorker } from "@/lib/jobs/worker";
import { loadMaskingConfig, saveMaskingConfig } from "@/lib/masking/store";
import { scanHandler } from "./scan";
import { exportLetters, listGroups, listLetters } from "./use-cases";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

/**
 * A role that sees a value masked cannot learn it through a filter, a
 * count, a group or a digest. Letters are dead-lettered by RabbitMQ and read by a real scan; each
 * test asks as a viewer the way the review did (right guess against wrong guess) and checks the
 * answers cannot be told apart.
 */
const enc = (s: string) => new TextEncoder().encode(s);
const PASSWORD = "hunter2-Zq";
const CARD = "4111111111111111";
const AUTH = "Basic dXNlcjpodW50ZXIy";
const BODY = `{"user":"jane","password":"${PASSWORD}","amount":12}`;

const kit = new RabbitKit();
const adapter = new RabbitMqAdapter(rabbitConfig({ id: `oracle-${randomUUID().slice(0, 6)}` }), {
  allManagedHeaders: MANAGED_HEADERS,
  idleMs: 500,
});
const actors = {} as Record<"viewer" | "operator" | "admin", Actor>;
let dlq = "";
const meta = () => ({ requestId: randomUUID(), ip: "127.0.0.1" });
const filter = (over: Record<string, unknown> = {}) => ({ connectionId: adapter.connectionId, queue: dlq, ...over });

beforeAll(async () => {
  for (const role of ["viewer", "operator", "admin"] as const) {
    const u = await createUser({
      email: `${role}-${randomUUID().slice(0, 8)}@oracle.test`,
      role,
      password: "a-long-enough-password",
    });
    actors[role] = { id: u.id, email: u.email, name: null, role };
  }
  ({ dlq } = await kit.dlqByReject(
    Array.from({ length: 3 }, (_, i) => ({
      body: enc(BODY),
      messageId: `oracle-${i}`,
      headers: {
        "x-exception-class": "com.acme.LoginFailed",
        "x-exception-message": `login refused password=${PASSWORD} card ${CARD} attempt ${i}`,
        authorization: AUTH,
        "x-tenant": "acme",
      },
    })),
  ));
  const kind = `scan-oracle-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({
    kind: kind as "scan",
    connectionId: adapter.connectionId,
    queue: dlq,
    params: { acceptRisk: true },
  });
  const worker = new JobWorker({
    handlers: { [kind]: scanHandler({ adapterFor: () => adapter }) },
    owner: `test-${kind}`,
    leaseMs: 10_000,
  });
  await worker.runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
});

afterAll(async () => {
  await kit.cleanup();
  await adapter.close();
});

/** What a role's list answers for a filter: the count, and the ids of the rows it shows. */
async function answer(actor: Actor, over: Record<string, unknown>) {
  try {
    const r = await listLetters(actor, meta(), { filter: filter(over) });
    return { count: r.count, ids: r.letters.map((l) => l.letterId).sort() };
  } catch (e) {
    return { error: (e as { code?: string }).code ?? "error" };
  }
}

describe("filters are no oracle for masked values", () => {
  it("a header filter answers alike for the right and a wrong guess of a masked header", async () => {
    const right = await answer(actors.viewer, { header: { name: "authorization", value: AUTH } });
    const wrong = await answer(actors.viewer, { header: { name: "authorization", value: "Basic d3Jvbmc6Z3Vlc3M=" } });
    expect(right).toEqual(wrong);
    expect(right).toEqual({ error: "forbidden:filter" });
    // A header no rule masks still filters as before.
    expect(await answer(actors.viewer, { header: { name: "x-tenant", value: "acme" } })).toMatchObject({ count: 3 });
  });

  it("text search cannot read a masked secret out of the exception message, character by character", async () => {
    for (const actor of [actors.viewer, actors.operator]) {
      // Prefixes of the password and of the card: each answers the same as a wrong one (nothing).
      for (const probe of [PASSWORD.slice(0, 3), PASSWORD, CARD.slice(0, 6), CARD]) {
        expect(await answer(actor, { text: probe })).toEqual(await answer(actor, { text: `${probe.slice(0, -1)}#` }));
        expect(await answer(actor, { text: probe })).toMatchObject({ count: 0 });
      }
      // What the role does see is found: the words around the secret, and the masked form itself.
      expect(await answer(actor, { text: "login refused" })).toMatchObject({ count: 3 });
      expect(await answer(actor, { text: "password=[hidden]" })).toMatchObject({ count: 3 });
    }
  });

  it("the count of a redrive-style filter over exception text gives nothing away either", async () => {
    const right = await answer(actors.viewer, { text: `password=${PASSWORD}` });
    const wrong = await answer(actors.viewer, { text: "password=hunter3-Zq" });
    expect(right).toEqual(wrong);
  });

  it("grouping by a masked header merges its values and orders groups by what the role sees", async () => {
    const g = await listGroups(actors.viewer, meta(), {
      connectionId: adapter.connectionId,
      queue: dlq,
      by: "header:authorization",
    });
    expect(JSON.stringify(g)).not.toContain("dXNlcjpodW50ZXIy");
    expect(g.groups).toHaveLength(1);
    expect(g.groups[0].count).toBe(3);
  });

  it("a search over a sensitive DLQ is on record with what was searched for", async () => {
    const current = await loadMaskingConfig();
    await saveMaskingConfig(
      { rules: current.rules, sensitive: [...current.sensitive, { connectionId: adapter.connectionId, pattern: dlq }] },
      "test",
    );
    try {
      const m = meta();
      await listLetters(actors.operator, m, { filter: filter({ text: "login" }) });
      const rows = await queryAudit({ action: "triage.search", queue: dlq }, { limit: 5 });
      expect(rows.rows.find((r) => r.requestId === m.requestId)).toMatchObject({
        outcome: "success",
        details: expect.objectContaining({ filter: expect.objectContaining({ text: "login" }) }),
      });
      // A secret typed into the search (an admin's copy of it) is kept as the letters show it:
      // operators read the audit log, and they see that value masked.
      const typed = meta();
      await listLetters(actors.admin, typed, { filter: filter({ text: `refused password=${PASSWORD}` }) });
      const searched = await queryAudit({ action: "triage.search", queue: dlq }, { limit: 5 });
      const row = searched.rows.find((r) => r.requestId === typed.requestId);
      expect(row).toMatchObject({
        details: expect.objectContaining({ filter: expect.objectContaining({ text: "refused password=[hidden]" }) }),
      });
      expect(JSON.stringify(row)).not.toContain(PASSWORD);
    } finally {
      const now = await loadMaskingConfig();
      await saveMaskingConfig({ rules: now.rules, sensitive: now.sensitive.filter((s) => s.pattern !== dlq) }, "test");
    }
  });
});

describe("digests are no oracle for masked payloads", () => {
  const rawSha = createHash("sha256").update(BODY).digest("hex");

  it("no list, export or search shows or matches the payload's SHA-256 to a role that sees it masked", async () => {
    const list = await listLetters(actors.viewer, meta(), { filter: filter() });
    const exported = await exportLetters(actors.viewer, meta(), { filter: filter(), format: "json" });
    const rows = [];
    for await (const r of exported.rows) rows.push(r);
    expect(JSON.stringify(list)).not.toContain(rawSha);
    // The export route masks each row on its way out (maskExportedLetter); check what it would send.
    const { maskExportedLetter } = await import("./export");
    const { maskingPolicy } = await import("@/lib/masking/policy");
    const policy = await maskingPolicy("viewer", adapter.connectionId, dlq);
    expect(JSON.stringify(rows.map((r) => maskExportedLetter(r, policy)))).not.toContain(rawSha);
    // Guessing the payload and searching by its SHA-256 answers like a wrong guess.
    expect(await answer(actors.viewer, { text: rawSha })).toEqual(
      await answer(actors.viewer, { text: "0".repeat(64) }),
    );
    // The keyed digest the role is shown is stable across letters with the same bytes and can be searched.
    const shown = list.letters[0].sha256;
    expect(shown.startsWith("hmac:")).toBe(true);
    expect(new Set(list.letters.map((l) => l.sha256)).size).toBe(1);
    expect(await answer(actors.viewer, { text: shown })).toMatchObject({ count: 3 });
    // Fingerprints hash the SHA-256 too: keyed alike.
    const { fingerprint } = list.letters[0];
    expect(fingerprint).toMatch(/^[0-9a-f]{32}$/);
    const groups = await listGroups(actors.admin, meta(), { connectionId: adapter.connectionId, queue: dlq });
    const groupKey = groups.by === "group" ? groups.groups[0].groupKey : "";
    const stored = createHash("sha256").update(`${groupKey}\n${rawSha}`).digest("hex").slice(0, 32);
    expect(fingerprint).not.toBe(stored);
  });
});

describe("ids and group keys are no oracle either", () => {
  it("a RabbitMQ letter without a message id gets a keyed id that no one can compute from a guessed payload", async () => {
    const { dlq: bare } = await kit.dlqByReject([
      { body: enc(BODY), headers: { "x-exception-message": `password=${PASSWORD}` } },
    ]);
    const page = await adapter.browse(bare, { offset: 0, limit: 5, maxBodyBytes: 0 });
    expect(page.letters).toHaveLength(1);
    const [l] = page.letters;
    expect(l.id).toMatch(/^k-[A-Za-z0-9_-]{22}$/);
    // The former id was this unkeyed digest of the body and immutable fields, shown to every role.
    const full = (await adapter.getLetter(bare, l.id))!;
    const h = createHash("sha256");
    for (const p of full.properties)
      if (!["expiration", "redelivered", "exchange", "routingKey", "deliveryTag", "consumerTag"].includes(p.name))
        h.update(`p:${p.name}=${canonicalJson(p.value)}\n`);
    for (const e of full.headers) if (!isMutableHeader(e.name)) h.update(`h:${e.name}=${canonicalJson(e.value)}\n`);
    h.update(`b:${createHash("sha256").update(BODY).digest("hex")}`);
    expect(l.id.slice(2)).not.toBe(h.digest("base64url").slice(0, 22));
    // Stable across reads, as an id must be.
    expect((await adapter.browse(bare, { offset: 0, limit: 5, maxBodyBytes: 0 })).letters[0].id).toBe(l.id);
  });

  it("a group key is not the unkeyed digest of the exception text it groups", async () => {
    const g = await listGroups(actors.viewer, meta(), { connectionId: adapter.connectionId, queue: dlq });
    expect(g.by).toBe("group");
    const key = g.by === "group" ? g.groups[0].groupKey : "";
    const unkeyed = groupKeyOf({
      exceptionClass: "com.acme.LoginFailed",
      exceptionMessage: `login refused password=${PASSWORD} card ${CARD} attempt 0`,
      stackTrace: null,
      reason: null,
      count: null,
    }).key;
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(key).not.toBe(unkeyed);
  });
});
