import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryAudit } from "@/lib/audit";
import type { Actor } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { getDb } from "@/lib/db";
import { refreshGroupSummary } from "@/lib/triage/index-store";
import { indexLetters, issueLetter } from "@/lib/triage/issue-fixtures.test-data";
import {
  addIssueLink,
  addIssueNote,
  assignIssue,
  changeIssueState,
  changeIssueStates,
  getIssue,
  listIssues,
} from "./use-cases";

/**
 * The failure-issue use cases through authorize → act → audit on real Postgres, with letters
 * written straight into the triage index of a DLQ of the configured RabbitMQ connection.
 */
const CONN = "local-rabbitmq";
const SECRET = "hunter2-Zq";
const LOGIN = { key: "login", label: `LoginFailed: login refused password=${SECRET}` };
const TIMEOUT = { key: "timeout", label: "TimeoutException: upstream timed out" };
const T0 = Date.now();
const minutes = (n: number) => new Date(T0 + n * 60_000);
const meta = () => ({ requestId: `issues-${randomUUID()}`, ip: "127.0.0.1" });
const actors = {} as Record<"viewer" | "operator" | "admin", Actor>;
const team = `payments-${randomUUID().slice(0, 6)}`;

async function freshDlq(): Promise<string> {
  const queue = `issues-uc.${randomUUID().slice(0, 8)}.dlq`;
  await indexLetters(CONN, queue, [
    issueLetter("l1", minutes(-90), LOGIN),
    issueLetter("l2", minutes(-80), LOGIN),
    issueLetter("t1", minutes(-70), TIMEOUT),
  ]);
  await refreshGroupSummary(CONN, queue);
  return queue;
}

beforeAll(async () => {
  for (const role of ["viewer", "operator", "admin"] as const) {
    const u = await createUser({
      email: `${role}-${randomUUID().slice(0, 8)}@issues.test`,
      role,
      password: "a-long-enough-password",
    });
    actors[role] = { id: u.id, email: u.email, name: null, role };
  }
  await getDb().dlqOwner.create({
    data: { position: 0, connectionPattern: CONN, queuePattern: "issues-uc.*", team, contact: "#payments" },
  });
});

afterAll(async () => {
  await getDb().dlqOwner.deleteMany({ where: { team } });
});

describe("failure issue use cases", () => {
  it("lists a DLQ's issues with titles masked for every role, first and last seen, owner and broker kind", async () => {
    const queue = await freshDlq();
    for (const actor of [actors.viewer, actors.operator]) {
      const list = await listIssues(actor, meta(), { queue });
      expect(list.total).toBe(2);
      expect(list.counts).toMatchObject({ new: 2, resolved: 0 });
      const login = list.issues.find((i) => i.groupKey === LOGIN.key)!;
      expect(JSON.stringify(list)).not.toContain(SECRET);
      expect(login).toMatchObject({
        title: "LoginFailed: login refused password=[hidden]",
        state: "new",
        brokerKind: "rabbitmq",
        letters: 2,
        present: 2,
        firstSeenAt: minutes(-90).toISOString(),
        lastSeenAt: minutes(-80).toISOString(),
        owner: { team },
        assignee: null,
      });
    }
    // Filters on the console's own columns only: the broker kind and the owner select it, others do not.
    expect((await listIssues(actors.viewer, meta(), { queue, brokerKind: "kafka" })).total).toBe(0);
    expect((await listIssues(actors.viewer, meta(), { queue, owner: team })).total).toBe(2);
    expect((await listIssues(actors.viewer, meta(), { queue, owner: "nobody" })).total).toBe(0);
    expect((await listIssues(actors.viewer, meta(), { queue, states: ["resolved"] })).total).toBe(0);
  });

  it("refuses every change to a viewer, and audits each refusal", async () => {
    const queue = await freshDlq();
    const ref = { connectionId: CONN, queue, groupKey: LOGIN.key };
    const attempts: Array<[string, (m: ReturnType<typeof meta>) => Promise<unknown>]> = [
      ["issue.state_change", (m) => changeIssueState(actors.viewer, m, { ...ref, change: { state: "acknowledged" } })],
      [
        "issue.state_change_bulk",
        (m) => changeIssueStates(actors.viewer, m, { filter: { queue }, change: { state: "acknowledged" } }),
      ],
      ["issue.note", (m) => addIssueNote(actors.viewer, m, { ...ref, text: "hello" })],
      ["issue.link", (m) => addIssueLink(actors.viewer, m, { ...ref, url: "https://example.com/x" })],
      ["issue.assign", (m) => assignIssue(actors.viewer, m, { ...ref, assignee: { kind: "owner", name: team } })],
    ];
    for (const [action, attempt] of attempts) {
      const m = meta();
      await expect(attempt(m), action).rejects.toMatchObject({ code: "forbidden:issues:write" });
      const { rows } = await queryAudit({ action }, { limit: 20 });
      expect(
        rows.find((r) => r.requestId === m.requestId),
        action,
      ).toMatchObject({
        outcome: "denied",
        actorEmail: actors.viewer.email,
      });
    }
    expect((await getIssue(actors.viewer, meta(), ref)).issue.state).toBe("new");
    expect((await getIssue(actors.viewer, meta(), ref)).history).toHaveLength(1);
  });

  it("an operator resolves 'in the next release'; a letter after the resolve regresses it, which then lists first", async () => {
    const queue = await freshDlq();
    const ref = { connectionId: CONN, queue, groupKey: TIMEOUT.key };
    const m = meta();
    const r = await changeIssueState(actors.operator, m, {
      ...ref,
      change: { state: "resolved", note: "in the next release" },
    });
    expect(r.changed).toBe(true);
    expect(r.issue).toMatchObject({
      state: "resolved",
      resolveNote: "in the next release",
      stateChangedBy: actors.operator.email,
    });
    const { rows } = await queryAudit({ action: "issue.state_change", queue }, { limit: 5 });
    expect(rows[0]).toMatchObject({
      outcome: "success",
      actorEmail: actors.operator.email,
      requestId: m.requestId,
      target: TIMEOUT.key,
      details: expect.objectContaining({ from: "new", to: "resolved", note: true }),
    });
    // The same change again changes nothing (and says so).
    expect(
      (
        await changeIssueState(actors.operator, meta(), {
          ...ref,
          change: { state: "resolved", note: "in the next release" },
        })
      ).changed,
    ).toBe(false);

    await changeIssueState(actors.operator, meta(), {
      connectionId: CONN,
      queue,
      groupKey: LOGIN.key,
      change: { state: "acknowledged" },
    });
    await indexLetters(CONN, queue, [issueLetter("t2", new Date(), TIMEOUT)]);
    const [t] = await refreshGroupSummary(CONN, queue);
    expect(t).toMatchObject({ groupKey: TIMEOUT.key, from: "resolved", to: "regressed" });
    const list = await listIssues(actors.viewer, meta(), { queue });
    expect(list.issues.map((i) => [i.groupKey, i.state])).toEqual([
      [TIMEOUT.key, "regressed"],
      [LOGIN.key, "acknowledged"],
    ]);
    const { history } = await getIssue(actors.viewer, meta(), ref);
    expect(history.map((e) => [e.toState, e.actor])).toEqual([
      ["new", "system"],
      ["resolved", actors.operator.email],
      ["regressed", "system"],
    ]);
  });

  it("ignore until N more letters, set by an operator, ends after the Nth", async () => {
    const queue = await freshDlq();
    const ref = { connectionId: CONN, queue, groupKey: LOGIN.key };
    const r = await changeIssueState(actors.operator, meta(), {
      ...ref,
      change: { state: "ignored", ignore: { mode: "until_count", letters: 2 } },
    });
    expect(r.issue.ignore).toEqual({ mode: "until_count", letters: 2, untilCount: 4, remaining: 2 });
    await indexLetters(CONN, queue, [issueLetter("l3", minutes(-5), LOGIN)]);
    expect(await refreshGroupSummary(CONN, queue)).toEqual([]);
    expect((await getIssue(actors.viewer, meta(), ref)).issue).toMatchObject({
      state: "ignored",
      ignore: { remaining: 1 },
    });
    await indexLetters(CONN, queue, [issueLetter("l4", minutes(-4), LOGIN)]);
    expect(await refreshGroupSummary(CONN, queue)).toMatchObject([
      { to: "regressed", reason: "ignore ended after 2 more letters" },
    ]);
    await expect(
      changeIssueState(actors.operator, meta(), {
        ...ref,
        change: { state: "ignored", ignore: { mode: "until_time", until: minutes(-1).toISOString() } },
      }),
    ).rejects.toMatchObject({ code: "bad_request:ignore" });
  });

  it("notes are stored as typed and shown masked; links are http(s) only and shown with their host", async () => {
    const queue = await freshDlq();
    const ref = { connectionId: CONN, queue, groupKey: LOGIN.key };
    const note = await addIssueNote(actors.operator, meta(), {
      ...ref,
      text: `retry with password=${SECRET} <b>now</b>`,
    });
    expect(note.text).toBe("retry with password=[hidden] <b>now</b>");
    const stored = await getDb().failureIssueEvent.findFirstOrThrow({
      where: { connectionId: CONN, queue, kind: "note" },
    });
    expect(stored.text).toBe(`retry with password=${SECRET} <b>now</b>`);
    for (const url of ["javascript:alert(1)", "ftp://files.example.com/x", "https://me:pw@example.com/", "not a url"]) {
      await expect(addIssueLink(actors.operator, meta(), { ...ref, url }), url).rejects.toMatchObject({
        code: "bad_request:link",
      });
    }
    const link = await addIssueLink(actors.operator, meta(), {
      ...ref,
      url: "https://tracker.example.com/browse/PAY-12",
    });
    expect(link).toMatchObject({
      kind: "link",
      link: { url: "https://tracker.example.com/browse/PAY-12", host: "tracker.example.com" },
    });
    const { history } = await getIssue(actors.viewer, meta(), ref);
    expect(JSON.stringify(history)).not.toContain(SECRET);
    expect(history.map((e) => e.kind)).toEqual(["state", "note", "link"]);
    const { rows } = await queryAudit({ action: "issue.link", queue }, { limit: 5 });
    expect(rows[0].details).toMatchObject({ host: "tracker.example.com" });
    const notes = await queryAudit({ action: "issue.note", queue }, { limit: 5 });
    expect(JSON.stringify(notes.rows)).not.toContain(SECRET);
  });

  it("assigns to an owner's team or a user, and filters by assignee", async () => {
    const queue = await freshDlq();
    const ref = { connectionId: CONN, queue, groupKey: LOGIN.key };
    await expect(
      assignIssue(actors.operator, meta(), { ...ref, assignee: { kind: "owner", name: "no-such-team" } }),
    ).rejects.toMatchObject({ code: "bad_request:assignee" });
    await expect(
      assignIssue(actors.operator, meta(), { ...ref, assignee: { kind: "user", name: "nobody@issues.test" } }),
    ).rejects.toMatchObject({ code: "bad_request:assignee" });
    const r = await assignIssue(actors.operator, meta(), {
      ...ref,
      assignee: { kind: "owner", name: team.toUpperCase() },
    });
    expect(r.issue.assignee).toEqual({ kind: "owner", name: team });
    await assignIssue(actors.admin, meta(), {
      ...ref,
      groupKey: TIMEOUT.key,
      assignee: { kind: "user", name: actors.operator.email.toUpperCase() },
    });
    expect((await listIssues(actors.viewer, meta(), { queue, assignee: team })).issues.map((i) => i.groupKey)).toEqual([
      LOGIN.key,
    ]);
    expect(
      (await listIssues(actors.viewer, meta(), { queue, assignee: actors.operator.email })).issues.map(
        (i) => i.groupKey,
      ),
    ).toEqual([TIMEOUT.key]);
    expect((await listIssues(actors.viewer, meta(), { queue, assignee: "none" })).total).toBe(0);
    const { history } = await getIssue(actors.viewer, meta(), ref);
    expect(history.at(-1)).toMatchObject({ kind: "assign", text: `owner:${team}`, actor: actors.operator.email });
  });

  it("a bulk change applies to the filtered set, audited per group and as a whole under one operation", async () => {
    const queue = await freshDlq();
    const m = meta();
    const r = await changeIssueStates(actors.operator, m, {
      filter: { queue, states: ["new"] },
      change: { state: "ignored", ignore: { mode: "forever" } },
    });
    expect(r).toMatchObject({ matched: 2, changed: 2 });
    const audit = (await queryAudit({ queue }, { limit: 20 })).rows.filter((x) => x.requestId === m.requestId);
    expect(audit.map((x) => [x.action, x.target]).sort()).toEqual([
      ["issue.state_change", LOGIN.key],
      ["issue.state_change", TIMEOUT.key],
      ["issue.state_change_bulk", null],
    ]);
    expect(new Set(audit.map((x) => x.operationId))).toEqual(new Set([r.operationId]));
    expect((await listIssues(actors.viewer, meta(), { queue })).counts).toMatchObject({ ignored: 2, new: 0 });
  });

  it("a group indexed before its DLQ's issues existed gets its issue when asked about", async () => {
    const queue = await freshDlq();
    await getDb().failureIssue.deleteMany({ where: { connectionId: CONN, queue } });
    await getDb().failureIssueCursor.deleteMany({ where: { connectionId: CONN, queue } });
    expect((await listIssues(actors.viewer, meta(), { queue })).total).toBe(2);
    await expect(
      changeIssueState(actors.operator, meta(), {
        connectionId: CONN,
        queue,
        groupKey: "no-such-group",
        change: { state: "acknowledged" },
      }),
    ).rejects.toMatchObject({ code: "not_found:issue" });
  });
});
