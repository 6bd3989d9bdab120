import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { auditRowsOf, callV1, v1Users, type V1Handler, type V1User } from "@/test/api-v1";
import { GET as dlqLettersGET } from "@/app/api/v1/dlqs/[connectionId]/[queue]/letters/route";
import { GET as dlqLetterGET } from "@/app/api/v1/dlqs/[connectionId]/[queue]/letters/[letterId]/route";

/**
 * Path parameters of /api/v1 are decoded exactly once, on the real RabbitMQ (whose queue names may
 * hold `%` and `/`) and real Postgres. The handlers get their params as Next 16 gives a route
 * handler: each segment of the URL path percent-decoded once (`nextParams` below; checked against
 * `next start` 16.4.6: `/r/a%252Fb` reaches `app/r/[a]/route.ts` as `a%2Fb`). Any further decoding
 * in a handler makes a name holding `%2F` or `%25` unreachable, and lets a double-encoded name
 * (`%252F`) reach another queue.
 */
process.env.NEXTAUTH_SECRET ||= "api-v1-path-params-secret-0123456789abcdef012";
const RABBIT = "local-rabbitmq";
const H = (f: unknown) => f as V1Handler;
const enc = (s: string) => new TextEncoder().encode(s);

const kit = new RabbitKit();
let users: Record<"viewer", V1User>;
/** Named with the very characters a second decode would change: `%25` and `%2F`. */
let literal = "";
/** What a second decode of `literal` reads: a different queue, with a letter of its own. */
let decoy = "";
/** The traversal's target: reached only if `%252F` is decoded twice. */
let target = "";

/** The params Next passes a route handler for `path` matched against `pattern` ("/api/v1/dlqs/[connectionId]/…"). */
function nextParams(pattern: string, path: string): Record<string, string> {
  const names = pattern.split("/");
  const segments = new URL(path, "http://x").pathname.split("/");
  expect(segments.length).toBe(names.length);
  const out: Record<string, string> = {};
  names.forEach((n, i) => {
    const m = /^\[(\w+)\]$/.exec(n);
    if (m) out[m[1]] = decodeURIComponent(segments[i]);
    else expect(segments[i]).toBe(n);
  });
  return out;
}

const LETTERS = "/api/v1/dlqs/[connectionId]/[queue]/letters";
const LETTER = `${LETTERS}/[letterId]`;

/** A DLQ named `name` holding one letter whose message id is `messageId`, filled by RabbitMQ's dead-lettering. */
async function dlqNamed(name: string, messageId: string) {
  await kit.queue(name);
  const source = await kit.queue(kit.name("work"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": name });
  await kit.publish(source, { body: enc(JSON.stringify({ messageId })), messageId, headers: {} });
  await kit.rejectAll(source, 1);
  await kit.waitDepth(name, 1);
  return name;
}

async function lettersOf(segment: string) {
  const url = `/api/v1/dlqs/${RABBIT}/${segment}/letters`;
  return callV1(H(dlqLettersGET), url, { token: users.viewer.token, params: nextParams(LETTERS, url) });
}

beforeAll(async () => {
  users = await v1Users("v1-path-params", ["viewer"] as const);
  literal = await dlqNamed(`${kit.prefix}.50%25off%2Fsale.dlq`, "literal");
  decoy = await dlqNamed(decodeURIComponent(literal), "decoy");
  target = await dlqNamed(`${kit.prefix}.sec../../api.dlq`, "target");
  expect(decoy).toBe(`${kit.prefix}.50%off/sale.dlq`);
});

afterAll(async () => {
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
});

describe("path parameters of /api/v1 are decoded once", () => {
  it("reaches a queue named with `%25` and `%2F` by its encoded URL, and no other queue", async () => {
    const r = await lettersOf(encodeURIComponent(literal));
    expect(r.status, r.text).toBe(200);
    expect(r.body.items.map((l: { messageId: string }) => l.messageId)).toEqual(["literal"]);
    const rows = await auditRowsOf(r.requestId);
    expect(rows.map((x) => [x.action, x.outcome, x.queue])).toEqual([["dlq.open", "success", literal]]);

    // One letter of it, by the letter's own route: the queue and the letter id are each decoded once.
    const letterId = r.body.items[0].id as string;
    const url = `/api/v1/dlqs/${RABBIT}/${encodeURIComponent(literal)}/letters/${encodeURIComponent(letterId)}`;
    const one = await callV1(H(dlqLetterGET), url, { token: users.viewer.token, params: nextParams(LETTER, url) });
    expect(one.status, one.text).toBe(200);
    expect(one.body).toMatchObject({ id: letterId, messageId: "literal" });
    expect((await auditRowsOf(one.requestId)).map((x) => [x.action, x.queue, x.target])).toEqual([
      ["letter.view", literal, letterId],
    ]);

    // The decoy is reached by its own URL only.
    const d = await lettersOf(encodeURIComponent(decoy));
    expect(d.status, d.text).toBe(200);
    expect(d.body.items.map((l: { messageId: string }) => l.messageId)).toEqual(["decoy"]);
  });

  it("answers a double-encoded traversal with 404 for the name it spells, not with the queue it decodes to", async () => {
    const twice = encodeURIComponent(encodeURIComponent(target));
    expect(twice).toContain("..%252F..%252F");
    const r = await lettersOf(twice);
    expect(r.status, r.text).toBe(404);
    expect(r.text).not.toContain("target");
    // The refusal names the queue as asked for (decoded once), never the target.
    const rows = await auditRowsOf(r.requestId);
    expect(rows.map((x) => [x.action, x.outcome, x.queue])).toEqual([
      ["dlq.open", "failure", encodeURIComponent(target)],
    ]);

    // The target itself, asked for properly, answers with its letter.
    const ok = await lettersOf(encodeURIComponent(target));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.items.map((l: { messageId: string }) => l.messageId)).toEqual(["target"]);
  });
});
