import { randomUUID } from "node:crypto";
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { MGMT_URL, RabbitKit, TEST_AMQP_URL } from "@/lib/brokers/rabbitmq/test-kit";
import { resetConfigCache } from "@/lib/config";
import { getDb } from "@/lib/db";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { changeIssueState } from "@/lib/issues/use-cases";
import type { StateChangeInput } from "@/lib/issues/inputs";
import { refreshGroupSummary } from "@/lib/triage/index-store";
import { indexLetters, issueLetter } from "@/lib/triage/issue-fixtures.test-data";
import { cleanUp, scanDlq } from "@/test/integration-kit";
import { deliverAlerts } from "./deliver";
import { evaluateAlerts } from "./evaluate";
import { claimIssueEvent } from "./group-store";
import type { SlackMessage } from "./message";
import { createAlertRule } from "./use-cases";

/**
 * Alerts on failure groups end to end on real Postgres: letters dead-lettered by a real RabbitMQ
 * and scanned into the triage index (or written into the index as a scan writes them, where the
 * broker adds nothing), the issues' own changes, evaluation rounds, and delivery rounds posting to
 * a real HTTP receiver on 127.0.0.1; two evaluators racing on separate database connections.
 */
(globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage ??= AsyncLocalStorage;
process.env.NEXTAUTH_SECRET ||= "group-alerts-test-secret-0123456789abcdef012345";
const ORIGIN = "http://127.0.0.1:3997";
process.env.NEXTAUTH_URL = ORIGIN;

const RUN = `ga-${randomUUID().slice(0, 8)}`;
const CONN = "group-alerts-it";
const dir = mkdtempSync(path.join(tmpdir(), "dlq-group-alerts-"));
const configFile = path.join(dir, "config.json");
const kit = new RabbitKit(RUN);

function writeConfig() {
  writeFileSync(
    configFile,
    JSON.stringify({
      // Discovery through the management API finds the DLQs the kit makes (named as dead-letter targets).
      connections: [{ kind: "rabbitmq", id: CONN, url: TEST_AMQP_URL, management: { url: MGMT_URL } }],
      owners: [{ connection: CONN, queue: `${RUN}.owned.*`, team: "payments", contact: "#payments-oncall" }],
      operations: { webhookAllowedHosts: ["127.0.0.1"] },
    }),
  );
  process.env.DLQ_CONSOLE_CONFIG = configFile;
  resetConfigCache();
}

const received: Array<{ path: string; body: SlackMessage }> = [];
const receiver = http.createServer((req, res) => {
  let raw = "";
  req.on("data", (c) => (raw += c));
  req.on("end", () => {
    received.push({ path: req.url ?? "", body: JSON.parse(raw) as SlackMessage });
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  });
});
let port = 0;
const hook = (name: string) => `http://127.0.0.1:${port}/hook/${name}/SECRET-${RUN}`;
const gotFor = (name: string) => received.filter((r) => r.path.startsWith(`/hook/${name}/`)).map((r) => r.body);

let admin: Actor;
let operator: Actor;
const meta = (): RequestMeta => ({ requestId: `group-alerts-${randomUUID()}`, ip: "127.0.0.1" });
const replicas: PrismaClient[] = [];

beforeAll(async () => {
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  port = (receiver.address() as AddressInfo).port;
  writeConfig();
  for (const role of ["admin", "operator"] as const) {
    const u = await createUser({ email: `${role}-${RUN}@group-alerts.test`, role, password: "a-long-enough-password" });
    const actor = { id: u.id, email: u.email, name: null, role };
    if (role === "admin") admin = actor;
    else operator = actor;
  }
  for (let i = 0; i < 2; i++)
    replicas.push(new PrismaClient({ adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL! }) }));
});

afterAll(async () => {
  await getDb().alertRule.deleteMany({ where: { name: { startsWith: RUN } } });
  await Promise.all(replicas.map((r) => r.$disconnect()));
  await cleanUp(kit);
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
  rmSync(dir, { recursive: true, force: true });
  delete process.env.DLQ_CONSOLE_CONFIG;
  resetConfigCache();
});

beforeEach(() => writeConfig());

// Each test's rules go when it ends, so later rounds send only for their own.
afterEach(async () => {
  await getDb().alertRule.deleteMany({ where: { name: { startsWith: RUN } } });
});

async function rule(
  name: string,
  kind: "group_new" | "group_regressed" | "group_grew",
  scope: { queuePattern?: string; ownerTeam?: string },
  params: Record<string, unknown> = {},
) {
  return createAlertRule(admin, meta(), {
    name: `${RUN} ${name}`,
    kind,
    params,
    connectionId: CONN,
    queuePattern: scope.queuePattern ?? null,
    ownerTeam: scope.ownerTeam ?? null,
    webhookUrl: hook(name),
  });
}

async function round(opts: { now?: Date } = {}) {
  const e = await evaluateAlerts(opts);
  const d = await deliverAlerts();
  return { e, d };
}

const issuesOf = (queue: string) =>
  getDb().failureIssue.findMany({ where: { connectionId: CONN, queue }, orderBy: { groupKey: "asc" } });

async function change(queue: string, groupKey: string, c: StateChangeInput) {
  await changeIssueState(operator, meta(), { connectionId: CONN, queue, groupKey, change: c });
}

const deliveriesOf = (ruleId: string) => getDb().alertDelivery.findMany({ where: { ruleId }, orderBy: { id: "asc" } });

const enc = (s: string) => new TextEncoder().encode(s);
const timeout = (id: string) => ({
  body: enc(`{"order":"${id}"}`),
  messageId: id,
  headers: {
    "x-exception-class": "java.net.SocketTimeoutException",
    "x-exception-message": `Read timed out after ${3000 + id.length} ms calling order ${id}`,
  },
});

/** One more letter dead-lettered into `dlq` by rejecting it from its work queue. */
async function deadLetter(source: string, dlq: string, letter: ReturnType<typeof timeout>) {
  const depth = await kit.depth(dlq);
  await kit.publish(source, letter);
  await kit.rejectAll(source, 1);
  await kit.waitDepth(dlq, depth + 1);
}

describe("new and regressed groups, from letters a real RabbitMQ dead-lettered", () => {
  it("a new group alerts once; resolved, it regresses when a letter of its fingerprint arrives, with exactly one message", async () => {
    const { dlq, source } = await kit.dlqByReject([timeout("o-1"), timeout("o-2")]);
    const fresh = await rule("new", "group_new", { queuePattern: `${RUN}.*` });
    const regressed = await rule("regressed", "group_regressed", { queuePattern: `${RUN}.*` });

    await scanDlq(CONN, dlq);
    const [issue] = await issuesOf(dlq);
    expect(issue).toMatchObject({ state: "new", letters: 2, exceptionClass: "java.net.SocketTimeoutException" });
    await round();
    await round();
    expect(gotFor("new")).toHaveLength(1);
    expect(gotFor("regressed")).toHaveLength(0);
    const first = gotFor("new")[0].text;
    expect(first).toContain(`:rotating_light: Firing: ${dlq} on ${CONN}: a new failure group (rule "${RUN} new")`);
    expect(first).toContain("Exception: java.net.SocketTimeoutException");
    // Slack's markup characters escaped: the normalised message reads "after <num> ms calling order o-<num>".
    expect(first).toContain("Message: Read timed out after &lt;num&gt; ms calling order o-&lt;num&gt;");
    expect(first).toContain("Seen: first seen: 2 letters, dead-lettered from");
    expect(first).toContain(
      `<${ORIGIN}/failures/${CONN}/${encodeURIComponent(dlq)}/${issue.groupKey}|Open the group in DLQ Console>`,
    );

    // Resolved; scanned again with nothing new: quiet.
    await change(dlq, issue.groupKey, { state: "resolved", note: "in the next release" });
    await scanDlq(CONN, dlq);
    await round();
    expect(gotFor("regressed")).toHaveLength(0);

    // RabbitMQ stamps x-death to the second: the next letter dies a full second after the resolve.
    await new Promise((r) => setTimeout(r, 1_100));
    await deadLetter(source, dlq, timeout("o-3"));
    await scanDlq(CONN, dlq);
    expect((await issuesOf(dlq))[0]).toMatchObject({ state: "regressed", letters: 3 });
    for (let i = 0; i < 3; i++) await round();

    expect(gotFor("regressed")).toHaveLength(1);
    expect(gotFor("new")).toHaveLength(1);
    const text = gotFor("regressed")[0].text;
    expect(text).toContain(`Firing: ${dlq} on ${CONN}: a resolved failure group regressed`);
    expect(text).toMatch(/Seen: a letter dead-lettered at \S+ arrived after the resolve at \S+; 3 letters/);
    expect((await deliveriesOf(regressed.id)).map((d) => [d.event, d.state, d.attempts])).toEqual([
      ["fire", "delivered", 1],
    ]);
    expect(await deliveriesOf(fresh.id)).toHaveLength(1);
  });

  it("names the group's exception message as a viewer sees it: a default masking rule's value arrives masked", async () => {
    const { dlq } = await kit.dlqByReject([
      {
        body: enc('{"login":"jane"}'),
        messageId: "login-1",
        headers: {
          "x-exception-class": "com.acme.LoginFailed",
          "x-exception-message":
            "Login refused for jane.doe@example.com: password=Sesame-Open, card 4111 1111 1111 1111",
        },
      },
    ]);
    await rule("masked", "group_new", { queuePattern: dlq });
    await scanDlq(CONN, dlq);
    expect((await issuesOf(dlq))[0].label).toContain("password=Sesame-Open");
    await round();

    const [got] = received.filter((r) => r.path.startsWith("/hook/masked/"));
    expect(got).toBeDefined();
    const body = JSON.stringify(got.body);
    for (const secret of ["Sesame-Open", "jane.doe@example.com", "4111 1111 1111 1111", "4111111111111111"])
      expect(body).not.toContain(secret);
    expect(got.body.text).toContain("Message: Login refused for &lt;email&gt;: password=[hidden], card");
    expect(got.body.text).toContain("Group: com.acme.LoginFailed: Login refused for &lt;email&gt;: password=[hidden]");
  });
});

describe("ignored groups", () => {
  it("an ignored-until-N group alerts only after N more letters; an ignored-forever group never", async () => {
    const queue = `${RUN}.ignored.dlq`;
    const T0 = Date.now();
    const at = (m: number) => new Date(T0 + m * 60_000);
    const U = { key: `${RUN}-until` };
    const F = { key: `${RUN}-forever` };
    await rule("ig-new", "group_new", { queuePattern: queue });
    await rule("ig-regressed", "group_regressed", { queuePattern: queue });
    await rule("ig-grew", "group_grew", { queuePattern: queue }, { letters: 2, minutes: 60 });

    await indexLetters(CONN, queue, [issueLetter("u1", at(-30), U), issueLetter("f1", at(-30), F)]);
    await refreshGroupSummary(CONN, queue);
    // Ignored before any round saw them: their "new" is never sent.
    await change(queue, U.key, { state: "ignored", ignore: { mode: "until_count", letters: 3 } });
    await change(queue, F.key, { state: "ignored", ignore: { mode: "forever" } });
    await round();
    expect(received.filter((r) => r.path.includes("/ig-"))).toEqual([]);

    // Two of the three letters, and a burst of the forever-ignored group: still nothing.
    await indexLetters(CONN, queue, [
      issueLetter("u2", at(-20), U),
      issueLetter("u3", at(-19), U),
      ...["f2", "f3", "f4", "f5"].map((id) => issueLetter(id, at(-10), F)),
    ]);
    await refreshGroupSummary(CONN, queue);
    await round();
    expect(received.filter((r) => r.path.includes("/ig-"))).toEqual([]);

    // The third: the ignore ends (regressed), and the group is over the growth count now.
    await indexLetters(CONN, queue, [issueLetter("u4", at(-5), U)]);
    await refreshGroupSummary(CONN, queue);
    await round();
    await round();
    expect(gotFor("ig-new")).toEqual([]);
    expect(gotFor("ig-regressed").map((m) => m.text.split("\n")[0])).toEqual([
      `:rotating_light: Firing: ${queue} on ${CONN}: a resolved failure group regressed (rule "${RUN} ig-regressed")`,
    ]);
    expect(gotFor("ig-regressed")[0].text).toContain("Seen: ignore ended after 3 more letters");
    expect(gotFor("ig-grew")).toHaveLength(1);
    expect(gotFor("ig-grew")[0].text).toContain(`Group: Failure: ${U.key}`);
    const forever = (await issuesOf(queue)).find((i) => i.groupKey === F.key);
    expect(forever).toMatchObject({ state: "ignored", letters: 5 });
    expect(received.filter((r) => r.path.includes("/ig-") && JSON.stringify(r.body).includes(F.key))).toEqual([]);
  });
});

describe("a group that grew by N letters within M minutes", () => {
  it("fires once per crossing, for the groups of its scope only", async () => {
    const queue = `${RUN}.owned.grew.dlq`;
    const other = `${RUN}.unowned.grew.dlq`;
    const T = Date.now();
    const at = (m: number) => new Date(T + m * 60_000);
    const G = { key: `${RUN}-grew` };
    const r = await rule("grew", "group_grew", { ownerTeam: "payments" }, { letters: 3, minutes: 10 });

    await indexLetters(CONN, queue, [issueLetter("g1", at(-5), G), issueLetter("g2", at(-4), G)]);
    await indexLetters(
      CONN,
      other,
      ["x1", "x2", "x3", "x4"].map((id) => issueLetter(id, at(-2), G)),
    );
    await refreshGroupSummary(CONN, queue);
    await refreshGroupSummary(CONN, other);
    await round({ now: at(0) });
    expect(gotFor("grew")).toEqual([]);

    await indexLetters(CONN, queue, [issueLetter("g3", at(-3), G)]);
    await refreshGroupSummary(CONN, queue);
    await round({ now: at(0) });
    expect(gotFor("grew").map((m) => m.text.split("\n")[0])).toEqual([
      `:rotating_light: Firing: ${queue} on ${CONN}: a failure group grew by 3 letters or more within 10 min (rule "${RUN} grew")`,
    ]);
    expect(gotFor("grew")[0].text).toContain("Seen: 3 letters arrived in the last 10 minutes");
    expect(gotFor("grew")[0].text).toContain("Owner: payments (#payments-oncall)");

    // Still growing, still over: no second message.
    await indexLetters(CONN, queue, [issueLetter("g4", at(-2), G), issueLetter("g5", at(-1), G)]);
    await refreshGroupSummary(CONN, queue);
    await round({ now: at(0) });
    await round({ now: at(5) });
    expect(gotFor("grew")).toHaveLength(1);

    // The window passes (quietly), then a new burst crosses again: a second message.
    await round({ now: at(20) });
    expect(gotFor("grew")).toHaveLength(1);
    await indexLetters(
      CONN,
      queue,
      ["g6", "g7", "g8"].map((id, i) => issueLetter(id, at(21 + i), G)),
    );
    await refreshGroupSummary(CONN, queue);
    await round({ now: at(25) });
    await round({ now: at(26) });
    expect(gotFor("grew")).toHaveLength(2);
    expect((await deliveriesOf(r.id)).map((d) => [d.queue, d.state])).toEqual([
      [queue, "delivered"],
      [queue, "delivered"],
    ]);
  });
});

describe("replicas racing", () => {
  it("two evaluators running at once send one message per rule and change", async () => {
    const queue = `${RUN}.race.dlq`;
    const G = { key: `${RUN}-race` };
    const fresh = await rule("race-new", "group_new", { queuePattern: queue });
    const grew = await rule("race-grew", "group_grew", { queuePattern: queue }, { letters: 2, minutes: 30 });
    const now = new Date();
    await indexLetters(
      CONN,
      queue,
      ["r1", "r2", "r3"].map((id) => issueLetter(id, new Date(now.getTime() - 60_000), G)),
    );
    await refreshGroupSummary(CONN, queue);

    const results = await Promise.all([...replicas, getDb(), ...replicas].map((db) => evaluateAlerts({ db, now })));
    expect(results.reduce((n, x) => n + x.fired, 0)).toBe(2);
    expect(await deliveriesOf(fresh.id)).toHaveLength(1);
    expect(await deliveriesOf(grew.id)).toHaveLength(1);

    // The claim statement itself, many at once: one wins; a change already sent is not sent again.
    const claim = await rule("race-claim", "group_new", { queuePattern: `${queue}.none` });
    const [event] = await getDb().failureIssueEvent.findMany({ where: { connectionId: CONN, queue } });
    const payload = { text: "claimed by the race", blocks: [] };
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        claimIssueEvent(replicas[i % 2], claim.id, String(event.id), { connectionId: CONN, queue }, payload),
      ),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await claimIssueEvent(getDb(), fresh.id, String(event.id), { connectionId: CONN, queue }, payload)).toBe(
      false,
    );

    for (let i = 0; i < 3; i++) await Promise.all(replicas.map((db) => deliverAlerts({ db })));
    expect(gotFor("race-new")).toHaveLength(1);
    expect(gotFor("race-grew")).toHaveLength(1);
    expect(gotFor("race-claim").map((m) => m.text)).toEqual(["claimed by the race"]);
  });
});
