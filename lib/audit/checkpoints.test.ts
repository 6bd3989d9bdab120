import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "./hash";
import { latestCheckpoint, parseCheckpoints, signCheckpoint, type CheckpointBody } from "./checkpoints";
import { auditKeyringFromEnv, checkpointKey, type AuditKeyring } from "./key";

const ring = (id = "a1", key = randomBytes(32)): AuditKeyring => ({
  currentId: id,
  keys: new Map([[id, key]]),
  source: "keyring",
});
const body = (over: Partial<CheckpointBody> = {}): CheckpointBody => ({
  db: "7714546063589890173/dlq",
  lastId: "42",
  lastHash: "f".repeat(64),
  count: 40,
  at: "2026-12-02T03:00:00.000Z",
  keyId: "a1",
  ...over,
});
const lines = (...cps: object[]) => cps.map((c) => JSON.stringify(c)).join("\n");

describe("checkpoint signatures", () => {
  it("a checkpoint signed with the console's key reads back as valid", () => {
    const r = ring();
    const cp = signCheckpoint(body(), r);
    expect(cp).toMatchObject({ v: 1, keyId: "a1", lastId: "42", count: 40 });
    expect(cp.sig).toMatch(/^[0-9a-f]{64}$/);
    expect(parseCheckpoints(`${lines(cp)}\n`, r)).toEqual([{ line: 1, kind: "valid", cp }]);
  });

  it("any changed field, another key, a missing signature or garbage is invalid", () => {
    const r = ring();
    const cp = signCheckpoint(body(), r);
    const other = signCheckpoint(body(), ring("a1"));
    const tampered = lines(
      { ...cp, count: 41 },
      { ...cp, lastId: "43" },
      { ...cp, lastHash: "e".repeat(64) },
      { ...cp, db: "x/other" },
      other,
      { ...cp, sig: "" },
    );
    const text = `${tampered}\nnot json`;
    expect(parseCheckpoints(text, r).map((l) => l.kind)).toEqual([
      "invalid",
      "invalid",
      "invalid",
      "invalid",
      "invalid",
      "invalid",
      "invalid",
    ]);
  });

  it("a line signed with a key id this console lacks is told apart (rotation), not taken as valid", () => {
    const cp = signCheckpoint(body(), ring("old"));
    expect(parseCheckpoints(lines(cp), ring("a1"))).toEqual([{ line: 1, kind: "unknown-key", cp }]);
  });

  it("the checkpoint key is derived from, and differs from, the audit key: a row MAC never passes as a checkpoint signature", () => {
    const k = randomBytes(32);
    expect(checkpointKey(k)).toHaveLength(32);
    expect(checkpointKey(k).equals(k)).toBe(false);
    expect(checkpointKey(k).equals(checkpointKey(k))).toBe(true);
  });

  it("the latest checkpoint of a database is the one with the highest row id", () => {
    const r = ring();
    const parsed = parseCheckpoints(
      lines(
        signCheckpoint(body({ lastId: "9" }), r),
        signCheckpoint(body({ lastId: "100" }), r),
        signCheckpoint(body({ lastId: "20" }), r),
        signCheckpoint(body({ lastId: "500", db: "other" }), r),
      ),
      r,
    );
    expect(latestCheckpoint(parsed, body().db)?.lastId).toBe("100");
    expect(latestCheckpoint(parsed, "none")).toBeNull();
    expect(canonicalJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });
});

describe("auditKeyringFromEnv", () => {
  const b64 = () => randomBytes(32).toString("base64");
  it("reads a keyring with a current id, or one key, and refuses short keys and unknown ids", () => {
    const k = auditKeyringFromEnv(
      { DLQ_AUDIT_KEYS: `a2:${b64()},a1:${b64()}`, DLQ_AUDIT_KEY_ID: "a1" },
      "/nonexistent",
    );
    expect(k.currentId).toBe("a1");
    expect([...k.keys.keys()]).toEqual(["a2", "a1"]);
    expect(auditKeyringFromEnv({ DLQ_AUDIT_KEY: b64() }, "/nonexistent").currentId).toBe("env");
    expect(() => auditKeyringFromEnv({ DLQ_AUDIT_KEY: "c2hvcnQ=" }, "/nonexistent")).toThrow();
    expect(() =>
      auditKeyringFromEnv({ DLQ_AUDIT_KEYS: `a1:${b64()}`, DLQ_AUDIT_KEY_ID: "zz" }, "/nonexistent"),
    ).toThrow();
  });
});
