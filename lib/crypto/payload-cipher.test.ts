import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { decryptPayload, encryptPayload, keyringFromEnv, payloadAad } from "./payload-cipher";

const k1 = randomBytes(32).toString("base64");
const k2 = randomBytes(32).toString("base64");
const aad = payloadAad("conn", "orders.dlq", "letter-1");
const body = new TextEncoder().encode('{"order":42,"email":"a@example.test"}');

describe("payload encryption", () => {
  it("round-trips with a random nonce per payload", () => {
    const ring = keyringFromEnv({ DLQ_INDEX_KEY: k1 });
    const a = encryptPayload(body, aad, ring);
    const b = encryptPayload(body, aad, ring);
    expect(a.keyId).toBe("env");
    expect(a.data.subarray(0, 12).equals(b.data.subarray(0, 12))).toBe(false);
    expect(a.data.length).toBe(12 + body.length + 16);
    expect(decryptPayload(a, aad, ring).equals(Buffer.from(body))).toBe(true);
  });

  it("never repeats a nonce, across several refills of the nonce pool", () => {
    const ring = keyringFromEnv({ DLQ_INDEX_KEY: k1 });
    const seen = new Set<string>();
    const n = 3 * 4096 + 7; // the pool holds 4,096 nonces
    for (let i = 0; i < n; i++) seen.add(encryptPayload(body, aad, ring).data.subarray(0, 12).toString("hex"));
    expect(seen.size).toBe(n);
    expect(seen.has("00".repeat(12))).toBe(false);
  });

  it("detects a tampered ciphertext, tag or nonce (GCM authentication)", () => {
    const ring = keyringFromEnv({ DLQ_INDEX_KEY: k1 });
    const sealed = encryptPayload(body, aad, ring);
    for (const at of [0, 14, sealed.data.length - 1]) {
      const bad = Buffer.from(sealed.data);
      bad[at] ^= 0x01;
      expect(() => decryptPayload({ keyId: sealed.keyId, data: bad }, aad, ring)).toThrow(
        expect.objectContaining({ code: "internal:payload-integrity" }),
      );
    }
  });

  it("refuses a ciphertext moved to another row (AAD binds it to its letter)", () => {
    const ring = keyringFromEnv({ DLQ_INDEX_KEY: k1 });
    const sealed = encryptPayload(body, aad, ring);
    expect(() => decryptPayload(sealed, payloadAad("conn", "orders.dlq", "letter-2"), ring)).toThrow(
      expect.objectContaining({ code: "internal:payload-integrity" }),
    );
  });

  it("rotates: new payloads use the current key id, old ones still decrypt while their key is kept", () => {
    const before = keyringFromEnv({ DLQ_INDEX_KEYS: `k1:${k1}`, DLQ_INDEX_KEY_ID: "k1" });
    const old = encryptPayload(body, aad, before);
    const after = keyringFromEnv({ DLQ_INDEX_KEYS: `k2:${k2},k1:${k1}`, DLQ_INDEX_KEY_ID: "k2" });
    const fresh = encryptPayload(body, aad, after);
    expect(old.keyId).toBe("k1");
    expect(fresh.keyId).toBe("k2");
    expect(decryptPayload(old, aad, after).equals(Buffer.from(body))).toBe(true);
    expect(decryptPayload(fresh, aad, after).equals(Buffer.from(body))).toBe(true);
    // Dropping k1 makes its rows unreadable, with a message that says which key is missing.
    const dropped = keyringFromEnv({ DLQ_INDEX_KEYS: `k2:${k2}`, DLQ_INDEX_KEY_ID: "k2" });
    expect(() => decryptPayload(old, aad, dropped)).toThrow(expect.objectContaining({ code: "unavailable:index-key" }));
    // A key id stored beside a ciphertext of another key fails authentication, not silently.
    expect(() => decryptPayload({ keyId: "k2", data: old.data }, aad, after)).toThrow(
      expect.objectContaining({ code: "internal:payload-integrity" }),
    );
  });

  it("refuses malformed keys and an unknown current id", () => {
    expect(() => keyringFromEnv({ DLQ_INDEX_KEY: Buffer.alloc(16).toString("base64") })).toThrow(/32 bytes/);
    expect(() => keyringFromEnv({ DLQ_INDEX_KEYS: `k1:${k1}`, DLQ_INDEX_KEY_ID: "k9" })).toThrow(/not one of the ids/);
    expect(() => keyringFromEnv({ DLQ_INDEX_KEYS: "nocolon" })).toThrow(/id:base64/);
  });

  it("without a key, generates one once into the data folder (mode 600) and reuses it", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "dlq-key-"));
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const a = keyringFromEnv({}, dir);
    const b = keyringFromEnv({}, dir);
    warn.mockRestore();
    expect(a.source).toBe("generated");
    expect(a.keys.get("local")!.equals(b.keys.get("local")!)).toBe(true);
    expect(Buffer.from(readFileSync(path.join(dir, "index-key"), "utf8"), "base64")).toHaveLength(32);
    expect(statSync(path.join(dir, "index-key")).mode & 0o777).toBe(0o600);
  });
});
