import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { queryAudit } from "@/lib/audit";
import { getDb } from "@/lib/db";
import { indexLetters, issueLetter } from "./issue-fixtures.test-data";
import { refreshGroupSummary } from "./index-store";
import { syncFailureIssues } from "./issue-sync";

/**
 * The failure issues of a DLQ follow its groups after every refreshGroupSummary (real Postgres).
 * Times are relative to the test's start; the sync's `now` is passed where an ignore's end depends on it.
 */
const CONN = "issue-sync";
const T0 = Date.now();
const minutes = (n: number) => new Date(T0 + n * 60_000);
const dlq = () => `issues.${randomUUID().slice(0, 8)}.dlq`;
const A = { key: "group-a" };

const issueOf = (queue: string, groupKey = A.key) =>
  getDb().failureIssue.findUniqueOrThrow({
    where: { connectionId_queue_groupKey: { connectionId: CONN, queue, groupKey } },
  });
const historyOf = (queue: string, groupKey = A.key) =>
  getDb().failureIssueEvent.findMany({ where: { connectionId: CONN, queue, groupKey }, orderBy: { id: "asc" } });

async function setIssue(
  queue: string,
  data: Parameters<ReturnType<typeof getDb>["failureIssue"]["update"]>[0]["data"],
) {
  await getDb().failureIssue.update({
    where: { connectionId_queue_groupKey: { connectionId: CONN, queue, groupKey: A.key } },
    data,
  });
}

describe("syncFailureIssues", () => {
  it("makes a group seen for the first time a new issue, with first and last seen from the letters' death times, once", async () => {
    const queue = dlq();
    await indexLetters(CONN, queue, [
      issueLetter("a1", minutes(-50), A),
      issueLetter("a2", minutes(-40), A),
      issueLetter("b1", minutes(-30), { key: "group-b" }),
    ]);
    const transitions = await refreshGroupSummary(CONN, queue);
    expect(transitions.map((t) => [t.groupKey, t.from, t.to, t.reason, t.letters]).sort()).toEqual([
      ["group-a", null, "new", "first seen", 2],
      ["group-b", null, "new", "first seen", 1],
    ]);
    const a = await issueOf(queue);
    expect(a).toMatchObject({ state: "new", stateChangedBy: "system", letters: 2, label: "Failure: group-a" });
    expect([a.firstSeenAt, a.lastSeenAt]).toEqual([minutes(-50), minutes(-40)]);
    const history = await historyOf(queue);
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ kind: "state", fromState: null, toState: "new", actorEmail: "system" });
    expect(transitions.find((t) => t.groupKey === A.key)?.eventId).toBe(String(history[0].id));

    // Seen again, nothing new: no change, no second event, the count stays.
    expect(await refreshGroupSummary(CONN, queue)).toEqual([]);
    expect(await issueOf(queue)).toMatchObject({ state: "new", letters: 2 });
    expect(await historyOf(queue)).toHaveLength(1);
    const audit = await queryAudit({ action: "issue.state_auto", queue }, { limit: 10 });
    expect(audit.rows).toHaveLength(2);
    expect(audit.rows[0]).toMatchObject({
      actorEmail: "system",
      actorRole: null,
      outcome: "success",
      connectionId: CONN,
    });
  });

  it("regresses a resolved group only when a letter dead-lettered after the resolve arrives", async () => {
    const queue = dlq();
    await indexLetters(CONN, queue, [issueLetter("a1", minutes(-50), A)]);
    await refreshGroupSummary(CONN, queue);
    await setIssue(queue, { state: "resolved", resolvedAt: minutes(-20), stateChangedAt: minutes(-20) });

    // A letter dead-lettered before the resolve, read only now: still resolved, but counted.
    await indexLetters(CONN, queue, [issueLetter("a2", minutes(-25), A)]);
    expect(await refreshGroupSummary(CONN, queue)).toEqual([]);
    expect(await issueOf(queue)).toMatchObject({ state: "resolved", letters: 2 });

    await indexLetters(CONN, queue, [issueLetter("a3", minutes(-5), A)]);
    const [t] = await refreshGroupSummary(CONN, queue);
    expect(t).toMatchObject({ groupKey: A.key, from: "resolved", to: "regressed", letters: 3 });
    expect(t.reason).toContain("after the resolve");
    const issue = await issueOf(queue);
    expect(issue).toMatchObject({ state: "regressed", stateChangedBy: "system", letters: 3 });
    expect([issue.firstSeenAt, issue.lastSeenAt]).toEqual([minutes(-50), minutes(-5)]);
    expect(t.lastSeenAt).toBe(minutes(-5).toISOString());
  });

  it("ends an ignore until N more letters only when the Nth arrives, and says so", async () => {
    const queue = dlq();
    await indexLetters(CONN, queue, [issueLetter("a1", minutes(-50), A), issueLetter("a2", minutes(-49), A)]);
    await refreshGroupSummary(CONN, queue);
    // Ignored until 2 more letters: the count of 2 ends it at 4.
    await setIssue(queue, { state: "ignored", ignoreMode: "until_count", ignoreLetters: 2, ignoreUntilCount: 4 });

    await indexLetters(CONN, queue, [issueLetter("a3", minutes(-10), A)]);
    expect(await refreshGroupSummary(CONN, queue)).toEqual([]);
    expect(await issueOf(queue)).toMatchObject({ state: "ignored", letters: 3 });
    // The same letters read again are not more letters.
    await indexLetters(CONN, queue, [issueLetter("a3", minutes(-10), A), issueLetter("a1", minutes(-50), A)]);
    expect(await refreshGroupSummary(CONN, queue)).toEqual([]);
    expect(await issueOf(queue)).toMatchObject({ state: "ignored", letters: 3 });

    await indexLetters(CONN, queue, [issueLetter("a4", minutes(-5), A)]);
    const transitions = await refreshGroupSummary(CONN, queue);
    expect(transitions).toHaveLength(1);
    expect(transitions[0]).toMatchObject({
      from: "ignored",
      to: "regressed",
      reason: "ignore ended after 2 more letters",
    });
    expect(await issueOf(queue)).toMatchObject({
      state: "regressed",
      letters: 4,
      ignoreMode: null,
      ignoreUntilCount: null,
    });
  });

  it("ends an ignore until a time once that time has passed", async () => {
    const queue = dlq();
    await indexLetters(CONN, queue, [issueLetter("a1", minutes(-50), A)]);
    await refreshGroupSummary(CONN, queue);
    await setIssue(queue, {
      state: "ignored",
      stateChangedAt: minutes(-30),
      ignoreMode: "until_time",
      ignoreUntil: minutes(60),
    });
    expect(await syncFailureIssues(getDb(), CONN, queue, minutes(59))).toEqual([]);
    const [t] = await syncFailureIssues(getDb(), CONN, queue, minutes(61));
    // No letter arrived while it was ignored: it goes back to acknowledged, quietly.
    expect(t).toMatchObject({ from: "ignored", to: "acknowledged" });
    expect(t.reason).toContain("no letter arrived while it was ignored");
    expect(await issueOf(queue)).toMatchObject({ state: "acknowledged", ignoreMode: null, ignoreUntil: null });
  });

  it("two syncs of the same DLQ at once make each change once", async () => {
    const queue = dlq();
    await indexLetters(CONN, queue, [issueLetter("a1", minutes(-50), A)]);
    await refreshGroupSummary(CONN, queue);
    // As if the groups had been refreshed and not yet synced.
    await getDb().failureIssue.deleteMany({ where: { connectionId: CONN, queue } });
    await getDb().failureIssueEvent.deleteMany({ where: { connectionId: CONN, queue } });
    await getDb().failureIssueCursor.deleteMany({ where: { connectionId: CONN, queue } });
    const runs = await Promise.all([1, 2, 3].map(() => syncFailureIssues(getDb(), CONN, queue)));
    expect(runs.flat().map((t) => t.to)).toEqual(["new"]);
    expect(await historyOf(queue)).toHaveLength(1);
    expect(await issueOf(queue)).toMatchObject({ letters: 1 });

    await setIssue(queue, { state: "resolved", resolvedAt: minutes(-20), stateChangedAt: minutes(-20) });
    await indexLetters(CONN, queue, [issueLetter("a2", minutes(-1), A)]);
    await getDb().triageGroup.update({
      where: { connectionId_queue_groupKey: { connectionId: CONN, queue, groupKey: A.key } },
      data: { lastAt: minutes(-1), count: 2 },
    });
    const again = await Promise.all([1, 2, 3].map(() => syncFailureIssues(getDb(), CONN, queue)));
    expect(again.flat().map((t) => t.to)).toEqual(["regressed"]);
    expect((await historyOf(queue)).map((e) => e.toState)).toEqual(["new", "regressed"]);
    expect(await issueOf(queue)).toMatchObject({ state: "regressed", letters: 2 });
  });

  it("keeps an issue, its state and its count when its letters leave the DLQ", async () => {
    const queue = dlq();
    await indexLetters(CONN, queue, [issueLetter("a1", minutes(-50), A)]);
    await refreshGroupSummary(CONN, queue);
    await getDb().triageLetter.updateMany({ where: { connectionId: CONN, queue }, data: { goneAt: new Date() } });
    expect(await refreshGroupSummary(CONN, queue)).toEqual([]);
    expect(await issueOf(queue)).toMatchObject({ state: "new", letters: 1 });
  });
});
