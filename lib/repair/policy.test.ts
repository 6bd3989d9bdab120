import { describe, expect, it } from "vitest";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import type { MaskingRule } from "@/lib/masking/types";
import {
  bodyBytes,
  headerEditProblems,
  jsonSyntaxError,
  lockedFields,
  looksEditedFromMask,
  payloadKindOf,
  repairEnabled,
  type RepairEdit,
  type RepairMasking,
} from "./policy";

const enc = (s: string) => new TextEncoder().encode(s);
const str = (name: string, v: string): HeaderEntry => ({ name, value: { t: "string", v } });
const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

const secretHeader: MaskingRule = {
  id: "auth",
  description: "",
  enabled: true,
  target: { kind: "header", names: ["*token*"] },
  action: { kind: "hide" },
  roles: ["admin"],
};
const passwordField: MaskingRule = {
  id: "pw",
  description: "",
  enabled: true,
  target: { kind: "field", paths: ["password"] },
  action: { kind: "hide" },
  roles: ["admin"],
};
const noMask: RepairMasking = { rules: [], hashKey: "k", canReveal: false };

const letter = {
  headers: [
    str("x-death", "[…]"),
    str("x-first-death-queue", "orders"),
    str("x-dlq-redrive-count", "1"),
    str("x-tenant", "acme"),
    str("x-auth-token", "s3cr3t"),
  ],
  properties: [str("message_id", "m-1"), str("SentTimestamp", "1700000000000")],
  body: enc('{"order":1,"password":"hunter2"}'),
  contentType: "application/json",
};

describe("the config switch", () => {
  it("allows a DLQ only when some entry's connection and queue globs both match", () => {
    const scopes = [{ connection: "prod-*", queue: "orders.*" }];
    expect(repairEnabled(scopes, "prod-rabbit", "orders.dlq")).toBe(true);
    expect(repairEnabled(scopes, "prod-rabbit", "payments.dlq")).toBe(false);
    expect(repairEnabled(scopes, "staging", "orders.dlq")).toBe(false);
    expect(repairEnabled([], "prod-rabbit", "orders.dlq")).toBe(false);
  });
});

describe("payload kinds, as the letter page decides them", () => {
  it("tells JSON, text and binary apart", () => {
    expect(payloadKindOf(enc('{"a":1}'), null)).toBe("json");
    expect(payloadKindOf(enc("plain text"), null)).toBe("text");
    expect(payloadKindOf(Uint8Array.from([0, 0xff, 0xc3, 0x28]), null)).toBe("binary");
  });
});

describe("locked fields", () => {
  it("locks broker history, provenance and console markers, and every broker property", () => {
    const locked = lockedFields(letter, noMask);
    const names = locked.map((l) => `${l.kind}:${l.name}:${l.reason}`);
    expect(names).toEqual(
      expect.arrayContaining([
        "header:x-death:managed",
        "header:x-first-death-queue:managed",
        "header:x-dlq-redrive-count:managed",
        "property:message_id:property",
        "property:SentTimestamp:property",
      ]),
    );
    expect(names.some((n) => n.startsWith("header:x-tenant"))).toBe(false);
    expect(names.some((n) => n.startsWith("payload"))).toBe(false);
  });

  it("locks masked headers and a masked payload unless the role may reveal them", () => {
    const m: RepairMasking = { rules: [secretHeader, passwordField], hashKey: "k", canReveal: false };
    const locked = lockedFields(letter, m);
    expect(locked).toContainEqual(expect.objectContaining({ kind: "header", name: "x-auth-token", reason: "masked" }));
    expect(locked).toContainEqual(expect.objectContaining({ kind: "payload", reason: "masked" }));
    const revealer = lockedFields(letter, { ...m, canReveal: true });
    expect(revealer.some((l) => l.reason === "masked")).toBe(false);
  });
});

describe("header edits", () => {
  const locked = lockedFields(letter, { rules: [secretHeader], hashKey: "k", canReveal: false });
  it("accepts setting, adding and removing free headers", () => {
    expect(
      headerEditProblems(letter.headers, locked, {
        setHeaders: { "x-tenant": "acme-eu", "x-new": "1" },
        removeHeaders: [],
      }),
    ).toEqual([]);
  });
  it("refuses, with the name, any edit of a managed header, even one the letter does not have", () => {
    const edits: RepairEdit[] = [
      { removeHeaders: ["x-death"] },
      { setHeaders: { "X-DLQ-Original-Message-Id": "forged" } },
      { setHeaders: { "kafka_dlt-original-topic": "elsewhere" } },
    ];
    for (const edit of edits) {
      const p = headerEditProblems(letter.headers, locked, edit);
      expect(p.length, JSON.stringify(edit)).toBeGreaterThan(0);
      expect(p[0].message).toMatch(/cannot be (set|removed)/);
    }
  });
  it("refuses a masked header to a role that may not reveal it, a missing header's removal, and set-and-remove of one name", () => {
    expect(headerEditProblems(letter.headers, locked, { setHeaders: { "x-auth-token": "other" } })[0].message).toMatch(
      /masking rule/,
    );
    expect(headerEditProblems(letter.headers, locked, { removeHeaders: ["x-nope"] })[0].message).toMatch(
      /no header "x-nope"/,
    );
    expect(
      headerEditProblems(letter.headers, locked, { setHeaders: { "x-tenant": "a" }, removeHeaders: ["x-tenant"] })
        .map((p) => p.message)
        .join(),
    ).toMatch(/both set and removed/);
  });
});

describe("body edits", () => {
  const json = { body: enc('{"a":1}'), contentType: "application/json" };
  const text = { body: enc("hello"), contentType: "text/plain" };
  const binary = { body: Uint8Array.from([0, 1, 2, 0xff]), contentType: null };

  it("says where JSON stops being JSON, as line and column", () => {
    const r = bodyBytes(json, { kind: "json", text: '{\n  "a": 1,\n  "b": }\n' }, {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problem).toMatchObject({ line: 3, column: 8 });
    expect(r.problem.message).toMatch(/line 3, column 8/);
    expect(r.problem.message).not.toContain('"b": }'); // the parser's echo of the input is dropped
    expect(jsonSyntaxError('{"a":1')).toMatchObject({ line: 1, column: 7 });
    expect(jsonSyntaxError("[1, 2]")).toBeNull();
  });

  it("sends valid JSON and text as their UTF-8 bytes", () => {
    const r = bodyBytes(json, { kind: "json", text: '{"a":2,"note":"ünïcode"}' }, {});
    expect(r.ok && Buffer.from(r.bytes).toString("utf8")).toBe('{"a":2,"note":"ünïcode"}');
    const t = bodyBytes(text, { kind: "text", text: "hello, world" }, {});
    expect(t.ok && Buffer.from(t.bytes).toString("utf8")).toBe("hello, world");
  });

  it("refuses text with a broken character, and a JSON payload edited as plain text", () => {
    expect(bodyBytes(text, { kind: "text", text: "bad \ud800 char" }, {})).toMatchObject({
      ok: false,
      problem: { message: expect.stringMatching(/surrogate/) },
    });
    expect(bodyBytes(json, { kind: "text", text: "not json" }, {})).toMatchObject({
      ok: false,
      problem: { message: expect.stringMatching(/edit it as JSON/) },
    });
  });

  it("replaces a binary payload only by a file, byte for byte", () => {
    expect(bodyBytes(binary, { kind: "text", text: "abc" }, {})).toMatchObject({
      ok: false,
      problem: { message: expect.stringMatching(/uploading a file/) },
    });
    const bytes = Uint8Array.from([9, 0, 0xfe, 0x80]);
    const r = bodyBytes(binary, { kind: "file", base64: b64(bytes) }, {});
    expect(r.ok && Array.from(r.bytes)).toEqual([9, 0, 0xfe, 0x80]);
    expect(bodyBytes(binary, { kind: "file", base64: "not*base64" }, {})).toMatchObject({ ok: false });
  });

  it("holds the new payload to the broker's size limit and, where it carries only text, to UTF-8", () => {
    expect(bodyBytes(text, { kind: "text", text: "x".repeat(11) }, { maxBodyBytes: 10 })).toMatchObject({
      ok: false,
      problem: { message: expect.stringMatching(/11 bytes.*at most 10/) },
    });
    expect(bodyBytes(text, { kind: "text", text: "x".repeat(10) }, { maxBodyBytes: 10 }).ok).toBe(true);
    expect(
      bodyBytes(text, { kind: "file", base64: b64(Uint8Array.from([0xff])) }, { binaryBodies: false }),
    ).toMatchObject({ ok: false, problem: { message: expect.stringMatching(/only carries text/) } });
  });

  it("recognises a payload edited from its masked view", () => {
    expect(looksEditedFromMask(enc('{"password":"hunter2"}'), enc('{"password":"[hidden]","x":1}'))).toBe(true);
    expect(
      looksEditedFromMask(enc('{"note":"[hidden] is a word here"}'), enc('{"note":"[hidden] is a word here","x":1}')),
    ).toBe(false);
  });
});
