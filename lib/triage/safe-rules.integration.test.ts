import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryAudit } from "@/lib/audit";
import type { Actor } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { RabbitKit, testConfig as rabbitConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { DEFAULT_CLASSIFICATION_RULES } from "@/lib/triage";
import { queryGroups } from "./queries";
import { loadRules } from "./rules-store";
import { scanHandler } from "./scan";
import { saveRules } from "./use-cases";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

/**
 * Admin-written triage patterns that stalled a backtracking engine ("(?:.|.){25}#" took
 * 1.2 s on a 30-character message, per letter) are saved through the real use case and run by a
 * real scan of real RabbitMQ letters, at the cost of the default rules; what RE2 cannot run is
 * refused at save, in the admin's words.
 */
const enc = (s: string) => new TextEncoder().encode(s);
const meta = () => ({ requestId: `safe-rules-${randomUUID()}`, ip: "127.0.0.1" });
const kit = new RabbitKit();
const adapter = new RabbitMqAdapter(rabbitConfig({ id: `safe-rules-${randomUUID().slice(0, 6)}` }), {
  allManagedHeaders: MANAGED_HEADERS,
  idleMs: 500,
});
let admin: Actor;

const HOSTILE = [
  { id: "issue31.any-25", disposition: "permanent", field: "message", pattern: "(?:.|.){25}#", description: "" },
  { id: "issue31.a-26", disposition: "transient", field: "message", pattern: "(?:a{1,2}){26}b", description: "" },
  { id: "issue31.any-40", disposition: "permanent", field: "message", pattern: "(?:.|.){40}#", description: "" },
  { id: "issue31.a-40", disposition: "transient", field: "message", pattern: "(?:a{1,2}){40}b", description: "" },
] as const;

beforeAll(async () => {
  const u = await createUser({
    email: `admin-${randomUUID().slice(0, 8)}@safe-rules.test`,
    role: "admin",
    password: "a-long-enough-password",
  });
  admin = { id: u.id, email: u.email, name: null, role: "admin" };
});
afterAll(async () => {
  await saveRules(admin, meta(), { rules: DEFAULT_CLASSIFICATION_RULES }).catch(() => undefined);
  await kit.cleanup();
  await adapter.close();
});

/** 30 letters: the 30-character message (distinct classes, so no cache helps), plus two that match. */
const seed = () => [
  ...Array.from({ length: 30 }, (_, i) => ({
    body: enc(`{"n":${i}}`),
    messageId: `slow-${i}`,
    headers: { "x-exception-class": `com.acme.Slow${i}Exception`, "x-exception-message": "a".repeat(30) },
  })),
  {
    body: enc("{}"),
    messageId: "hash",
    headers: { "x-exception-class": "com.acme.HashException", "x-exception-message": `${"x".repeat(25)}#` },
  },
  {
    body: enc("{}"),
    messageId: "ab",
    headers: { "x-exception-class": "com.acme.AbException", "x-exception-message": `${"a".repeat(52)}b` },
  },
];

/** Runs one scan of `queue` to its end. */
async function scanToEnd(queue: string): Promise<void> {
  const kind = `safe-rules-scan-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({
    kind: kind as "scan",
    connectionId: adapter.connectionId,
    queue,
    params: { acceptRisk: true },
  });
  const worker = new JobWorker({
    handlers: { [kind]: scanHandler({ adapterFor: () => adapter }) },
    owner: `test-${kind}`,
    leaseMs: 10_000,
  });
  expect((await worker.runOnce())?.id).toBe(job.id);
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
}

describe("admin-written triage patterns on RE2", () => {
  // What the hostile patterns cost against the default rules is measured by `npm run bench:classify`;
  // here a backtracking engine would not finish the scan within the test's timeout (30 letters x
  // 1.2 s for the first pattern alone, in the security review).
  it("the issue's patterns are saved, and a scan with them finishes and classifies by them", async () => {
    const attacked = await kit.dlqByReject(seed());

    const m = meta();
    const saved = await saveRules(admin, m, { rules: [...HOSTILE, ...DEFAULT_CLASSIFICATION_RULES] });
    expect(saved.rules.slice(0, HOSTILE.length).map((r) => r.pattern)).toEqual(HOSTILE.map((r) => r.pattern));
    const { rows } = await queryAudit({ action: "triage.rules_save" }, { limit: 20 });
    expect(rows.find((r) => r.requestId === m.requestId)).toMatchObject({ outcome: "success" });

    await scanToEnd(attacked.dlq);

    const { groups } = await queryGroups(adapter.connectionId, attacked.dlq, (await loadRules()).rules);
    expect(groups.reduce((n, g) => n + g.count, 0)).toBe(32);
    const byClass = new Map(groups.map((g) => [g.exceptionClass, g]));
    expect(byClass.get("com.acme.HashException")).toMatchObject({ disposition: "permanent", ruleId: "issue31.any-25" });
    expect(byClass.get("com.acme.AbException")).toMatchObject({ disposition: "transient", ruleId: "issue31.a-26" });
    expect(byClass.get("com.acme.Slow0Exception")).toMatchObject({ disposition: "unknown", ruleId: null });
  });

  it("a pattern RE2 cannot run is refused at save in the admin's words, and the rules in force stay", async () => {
    const before = await loadRules();
    for (const [pattern, words] of [
      ["timeout(?!.*retried)", /^Rule "local.retry": pattern uses a lookahead "\(\?!.*match the text itself/],
      ["(['\"]).*\\1", /^Rule "local.retry": pattern uses a backreference "\\1"/],
      ["(?<=status )503", /^Rule "local.retry": pattern uses a lookbehind/],
    ] as const) {
      const m = meta();
      const rule = { id: "local.retry", disposition: "transient", field: "any", pattern, description: "" };
      const refused = await saveRules(admin, m, { rules: [rule, ...before.rules] }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: "bad_request:rules", userMessage: expect.stringMatching(words) });
      const { rows } = await queryAudit({ action: "triage.rules_save" }, { limit: 20 });
      expect(rows.find((r) => r.requestId === m.requestId)).toMatchObject({ outcome: "failure" });
    }
    expect((await loadRules()).version).toBe(before.version);
  });
});
