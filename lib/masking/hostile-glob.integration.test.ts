import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { closeAllAdapters } from "@/lib/connections/registry";
import { viewLetter } from "@/lib/dlq/view-letter";
import { globStepsTaken } from "@/lib/glob";
import { loadMaskingConfig, saveMaskingConfig } from "./store";
import type { MaskingRule } from "./types";

/**
 * An admin's glob cannot stall the console: with the header rule `*a*a*a*a*a*a*b` (and a field rule
 * of the same shape) in force, an operator's letter view of a RabbitMQ dead letter whose header and
 * field names are 60 `a`s masks what the rules match and goes through the linear matcher
 * (lib/glob.ts), whose steps per view stay a small multiple of the names' length. The backtracking
 * matcher this replaced took about 5·10^7 steps and 7 s per view here, holding every other request
 * of the process for as long. Counted in steps, not milliseconds, so a loaded machine cannot fail
 * it; bench:glob times the matcher against a plain pattern in the same run.
 */
const HOSTILE = "*a*a*a*a*a*a*b";
const A60 = "a".repeat(60);
const A59B = `${"a".repeat(59)}b`;
/** RabbitMQ letter ids: `m-` and the message id in base64url (lib/brokers/rabbitmq/identity.ts). */
const LETTER_ID = `m-${Buffer.from("hostile-glob-1").toString("base64url")}`;

const kit = new RabbitKit();
let operator: Actor;
let dlq = "";
let rulesBefore: MaskingRule[] = [];
const meta = (): RequestMeta => ({ requestId: `hostile-glob-${randomUUID()}`, ip: "127.0.0.1" });

const hostileRules: MaskingRule[] = [
  {
    id: "hostile-glob-header",
    description: "",
    enabled: true,
    target: { kind: "header", names: [HOSTILE] },
    action: { kind: "hide" },
    roles: ["viewer", "operator", "admin"],
  },
  {
    id: "hostile-glob-field",
    description: "",
    enabled: true,
    target: { kind: "field", paths: [HOSTILE] },
    action: { kind: "hide" },
    roles: ["viewer", "operator", "admin"],
  },
];

beforeAll(async () => {
  const u = await createUser({
    email: `op-${randomUUID().slice(0, 8)}@hostile-glob.test`,
    role: "operator",
    password: "operator-password-long-enough",
  });
  operator = { id: u.id, email: u.email, name: u.name, role: "operator" };
  rulesBefore = (await loadMaskingConfig()).rules;
  ({ dlq } = await kit.dlqByReject([
    {
      body: new TextEncoder().encode(JSON.stringify({ [A60]: "plain-field", [A59B]: "secret-field" })),
      messageId: "hostile-glob-1",
      headers: { [A60]: "plain-header", [A59B]: "secret-header" },
    },
  ]));
});

afterAll(async () => {
  const c = await loadMaskingConfig();
  await saveMaskingConfig({ rules: rulesBefore, sensitive: c.sensitive }, "hostile-glob");
  await kit.cleanup();
  await closeAllAdapters();
});

/**
 * The most steps one view may take: every name the view masks (a handful of headers and fields,
 * counted generously as 16 of 60 characters), against each glob of every rule in force (the
 * default rules and the two hostile ones, generously 64), each read once per shift-and word.
 * Linear in the names; the backtracking matcher needed about 10^7 steps for one of these names.
 */
const STEP_BOUND = 16 * (A60.length + HOSTILE.length) * 64;

describe("a hostile masking glob", () => {
  it("masks what it matches, in steps linear in the names", async () => {
    const view = () =>
      viewLetter(operator, meta(), { connectionId: "local-rabbitmq", queue: dlq, letterId: LETTER_ID });

    /** The glob steps one view takes, and what it shows. */
    const measured = async () => {
      const before = globStepsTaken();
      const { letter } = await view();
      return { spent: globStepsTaken() - before, shown: JSON.stringify(letter) };
    };
    const withRules = async (rules: MaskingRule[]) => {
      const c = await loadMaskingConfig();
      await saveMaskingConfig({ rules, sensitive: c.sensitive }, "hostile-glob");
    };

    await withRules(rulesBefore);
    const plain = await measured();
    expect(plain.shown).toContain("secret-header");

    await withRules([...rulesBefore, ...hostileRules]);
    const hostile = await measured();
    expect(hostile.shown).toContain("plain-header");
    expect(hostile.shown).toContain("plain-field");
    expect(hostile.shown).not.toContain("secret-header");
    expect(hostile.shown).not.toContain("secret-field");
    // The hostile rules were matched by the linear matcher (each of the four names read at least
    // once), and the whole view stayed within a bound linear in the names.
    expect(hostile.spent - plain.spent).toBeGreaterThanOrEqual(4 * A60.length);
    expect(hostile.spent).toBeLessThanOrEqual(STEP_BOUND);
  });
});
