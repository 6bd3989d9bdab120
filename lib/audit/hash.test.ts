import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  auditHash,
  auditMac,
  canonicalJson,
  GENESIS_HASH,
  MAX_DETAIL_STRING,
  linkFields,
  macText,
  normaliseDetails,
  type HashedFields,
} from "./hash";

const fields: HashedFields = {
  prevHash: GENESIS_HASH,
  operationId: "00000000-0000-4000-8000-000000000001",
  scope: "operation",
  at: "2026-01-02T03:04:05.678Z",
  actorId: "u1",
  actorEmail: "a@b.c",
  actorRole: "admin",
  action: "audit.view",
  outcome: "success",
  connectionId: null,
  queue: null,
  target: null,
  requestId: "r1",
  ip: "127.0.0.1",
  details: { b: 1, a: { d: [1, "x"], c: null } },
};

describe("canonicalJson", () => {
  it("sorts keys at every depth and drops undefined", () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: undefined, b: [3, { z: 1, y: 2 }] } })).toBe(
      '{"a":{"b":[3,{"y":2,"z":1}],"d":2},"b":1}',
    );
  });
});

describe("canonicalJson of flat objects (one JSON.stringify when the keys are already sorted)", () => {
  /** canonicalJson's walk, written out: the reference. */
  const walk = (v: unknown): string => {
    if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
    if (Array.isArray(v)) return `[${v.map((x) => walk(x === undefined ? null : x)).join(",")}]`;
    const o = v as Record<string, unknown>;
    const parts = Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${walk(o[k])}`);
    return `{${parts.join(",")}}`;
  };
  const KEYS = ["", "a", "B", "b", "ab", "état", "😀", "1", "10", "2x", "x1", "__proto__", "sha256", "state"];
  const VALUES = [
    "",
    "x",
    'q"\\\n\u2028',
    "\ud800",
    0,
    -0,
    1.5,
    -2e21,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    true,
    false,
    null,
    undefined,
  ];
  it("gives the walk's text for any flat object, sorted or not, and for nested ones", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 2000; round++) {
      const keys = KEYS.filter(() => rand(2) === 0);
      if (rand(2) === 0) keys.sort();
      const o: Record<string, unknown> = {};
      for (const k of keys)
        Object.defineProperty(o, k, {
          value: VALUES[rand(VALUES.length)],
          enumerable: true,
          writable: true,
          configurable: true,
        });
      if (rand(5) === 0) o.zz = { b: 1, a: [1, undefined] };
      expect(canonicalJson(o)).toBe(walk(o));
    }
    expect(canonicalJson(Object.assign(Object.create(null), { a: 1, b: "2" }))).toBe('{"a":1,"b":"2"}');
    expect(canonicalJson(new Date(0))).toBe("{}"); // not a plain object: walked, as before
  });
});

describe("auditHash", () => {
  it("does not depend on key order in details", () => {
    expect(auditHash(fields)).toBe(auditHash({ ...fields, details: { a: { c: null, d: [1, "x"] }, b: 1 } }));
  });

  it("changes with any field and with the previous hash", () => {
    const h = auditHash(fields);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(auditHash({ ...fields, outcome: "denied" })).not.toBe(h);
    expect(auditHash({ ...fields, prevHash: "1".repeat(64) })).not.toBe(h);
    expect(auditHash({ ...fields, at: "2026-01-02T03:04:05.679Z" })).not.toBe(h);
    expect(auditHash({ ...fields, ip: null })).not.toBe(h);
  });
});

describe("auditMac", () => {
  const key = randomBytes(32);
  it("is keyed: another key, another key id, any field or the previous link changes it", () => {
    const m = auditMac(fields, "a1", key);
    expect(m).toMatch(/^[0-9a-f]{64}$/);
    expect(m).toBe(auditMac({ ...fields, details: { a: { c: null, d: [1, "x"] }, b: 1 } }, "a1", key));
    expect(m).not.toBe(auditHash(fields)); // not the unkeyed sha256 anyone could recompute
    expect(auditMac(fields, "a1", randomBytes(32))).not.toBe(m);
    expect(auditMac(fields, "a2", key)).not.toBe(m);
    expect(auditMac({ ...fields, outcome: "denied" }, "a1", key)).not.toBe(m);
    expect(auditMac({ ...fields, prevHash: "1".repeat(64) }, "a1", key)).not.toBe(m);
  });

  it("is HMAC-SHA256 of macText under the key, for keys shorter and longer than a block", () => {
    const unicode = { ...fields, details: { note: "é € 😀 \u2028" } };
    for (const size of [1, 16, 32, 63, 64, 65, 100])
      for (const f of [fields, unicode]) {
        const k = randomBytes(size);
        expect(auditMac(f, "a1", k)).toBe(createHmac("sha256", k).update(macText(f, "a1")).digest("hex"));
        expect(auditMac(f, "a1", k)).toBe(auditMac(f, "a1", Buffer.from(k))); // another Buffer, same key
      }
  });
});

describe("macText", () => {
  it("is the canonical JSON of the row's linked fields and key id, whichever fields are missing", () => {
    const generic = (f: HashedFields, keyId: string) => canonicalJson({ ...linkFields(f), keyId });
    const sparse = { ...fields, actorId: undefined, ip: undefined, details: undefined, requestId: null };
    const noAction = { ...fields, action: undefined, scope: undefined } as unknown as HashedFields;
    const letter = {
      ...fields,
      scope: "letter",
      details: { attempts: 1, destination: "q", messageId: null, reason: undefined, sha256: "ab", state: "moved" },
    };
    for (const f of [
      fields,
      sparse as unknown as HashedFields,
      noAction,
      { ...fields, details: { "\u2028": "é\n" } },
      letter,
      { ...letter, details: { state: "moved", attempts: 1 } }, // not sorted: walked
      { ...letter, details: { "1": "x", a: -0, b: Number.NaN } },
      { ...letter, details: {} },
      { ...letter, details: null },
      { ...letter, target: undefined, queue: undefined } as unknown as HashedFields,
      { ...letter, requestId: { not: "text" } } as unknown as HashedFields,
    ] as HashedFields[])
      expect(macText(f, "k-1")).toBe(generic(f, "k-1"));
  });
});

describe("normaliseDetails", () => {
  it("truncates long strings, strips NUL, stringifies bigints and dates, drops undefined", () => {
    const d = normaliseDetails({
      long: "x".repeat(5000),
      nul: "a\u0000b",
      big: 12n,
      when: new Date(0),
      gone: undefined,
      nested: { s: "y".repeat(3000) },
    });
    expect((d!.long as string).startsWith("x".repeat(MAX_DETAIL_STRING))).toBe(true);
    expect((d!.long as string).length).toBeLessThan(MAX_DETAIL_STRING + 40);
    expect(d!.nul).toBe("ab");
    expect(d!.big).toBe("12");
    expect(d!.when).toBe("1970-01-01T00:00:00.000Z");
    expect("gone" in d!).toBe(false);
    expect((d!.nested as { s: string }).s.length).toBeLessThan(MAX_DETAIL_STRING + 40);
    expect(normaliseDetails(undefined)).toBeNull();
  });
});

describe("normaliseDetails on flat details (no JSON round trip)", () => {
  /** What the JSON round trip gives, the reference the flat path must match. */
  const roundTrip = (d: Record<string, unknown>) => normaliseDetails({ ...d, nested: {} }) as Record<string, unknown>;
  const cases: Array<Record<string, unknown>> = [
    { state: "moved", stage: "bulk", destination: "queue q", reason: null, redriveCount: 1, attempts: 2 },
    { a: undefined, b: -0, c: 0.5, d: true, e: false, "10": "x", "2": "y" },
    { s: "x".repeat(MAX_DETAIL_STRING) },
    {},
  ];
  it("gives what the JSON round trip gives, key order included", () => {
    for (const d of cases) {
      const fast = normaliseDetails(d)!;
      const { nested: _, ...slow } = roundTrip(d);
      expect(fast).toEqual(slow);
      expect(Object.keys(fast)).toEqual(Object.keys(slow));
      expect(canonicalJson(fast)).toBe(canonicalJson(slow));
      expect(JSON.stringify(fast)).toBe(JSON.stringify(slow));
    }
  });
  it("still cleans what needs cleaning: NUL, long strings, bigints, NaN, dates, nested values", () => {
    expect(normaliseDetails({ s: "a\u0000b" })).toEqual({ s: "ab" });
    expect(
      (normaliseDetails({ s: "x".repeat(MAX_DETAIL_STRING + 5) })!.s as string).endsWith("[truncated 5 chars]"),
    ).toBe(true);
    expect(normaliseDetails({ n: 10n, f: Number.NaN, i: Number.POSITIVE_INFINITY })).toEqual({
      n: "10",
      f: null,
      i: null,
    });
    expect(normaliseDetails({ at: new Date("2026-01-02T03:04:05.678Z") })).toEqual({ at: "2026-01-02T03:04:05.678Z" });
    expect(normaliseDetails({ o: { z: "a\u0000", y: undefined } })).toEqual({ o: { z: "a" } });
  });
});

describe("canonicalJson of objects", () => {
  it("matches the sorted-keys definition on mixed values", () => {
    const v = { z: [1, undefined, { b: undefined, a: "é\n" }], y: null, x: { "10": 1, "9": 2, a: -0 }, w: undefined };
    expect(canonicalJson(v)).toBe('{"x":{"10":1,"9":2,"a":0},"y":null,"z":[1,null,{"a":"é\\n"}]}');
    expect(canonicalJson({})).toBe("{}");
    expect(canonicalJson({ a: undefined })).toBe("{}");
  });
});
