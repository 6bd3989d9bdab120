import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  base62,
  bearerToken,
  displayPrefix,
  isWellFormedToken,
  mintToken,
  TOKEN_LENGTH,
  TOKEN_PATTERN,
} from "./format";

describe("token format", () => {
  it("is dlqc_ + 49 base62 characters, found by the documented pattern inside other text", () => {
    const t = mintToken();
    expect(t).toHaveLength(TOKEN_LENGTH);
    expect(TOKEN_LENGTH).toBe(54);
    expect(t).toMatch(/^dlqc_[0-9A-Za-z]{49}$/);
    expect(`export DLQ_TOKEN="${t}" # ci`.match(TOKEN_PATTERN)?.[0]).toBe(t);
    expect(isWellFormedToken(t)).toBe(true);
  });

  it("encodes all 256 random bits: the extremes fit and differ, and no two of 2,000 tokens are equal", () => {
    const zero = mintToken(Buffer.alloc(32, 0));
    const max = mintToken(Buffer.alloc(32, 0xff));
    expect(zero.slice(5, 48)).toBe("0".repeat(43));
    expect(max.slice(5, 48)).not.toBe(zero.slice(5, 48));
    expect(isWellFormedToken(zero) && isWellFormedToken(max)).toBe(true);
    expect(new Set(Array.from({ length: 2000 }, () => mintToken())).size).toBe(2000);
    expect(() => mintToken(randomBytes(16))).toThrow(RangeError);
  });

  it("base62 is fixed-width and refuses what does not fit", () => {
    expect(base62(BigInt(0), 3)).toBe("000");
    expect(base62(BigInt(61), 2)).toBe("0z");
    expect(base62(BigInt(62), 2)).toBe("10");
    expect(() => base62(BigInt(62 * 62), 2)).toThrow(RangeError);
  });

  it("rejects a token with a changed character (the checksum), a wrong prefix or a wrong length", () => {
    const t = mintToken();
    const i = 20;
    const flipped = t.slice(0, i) + (t[i] === "a" ? "b" : "a") + t.slice(i + 1);
    expect(isWellFormedToken(flipped)).toBe(false);
    expect(isWellFormedToken(`dlqx_${t.slice(5)}`)).toBe(false);
    expect(isWellFormedToken(t.slice(0, -1))).toBe(false);
    expect(isWellFormedToken(`${t}0`)).toBe(false);
    expect(isWellFormedToken(`dlqc_${"-".repeat(49)}`)).toBe(false);
  });

  it("shows dlqc_ and 8 more characters as the prefix", () => {
    const t = mintToken();
    expect(displayPrefix(t)).toBe(t.slice(0, 13));
    expect(displayPrefix(t)).toMatch(/^dlqc_[0-9A-Za-z]{8}$/);
  });
});

describe("bearer header", () => {
  it("takes the credential of a Bearer header, whatever the scheme's case", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer   abc ")).toBe("abc");
    expect(bearerToken("BEARER\tabc")).toBe("abc");
  });
  it("refuses anything else", () => {
    for (const h of [
      null,
      undefined,
      "",
      "Bearer",
      "Bearer ",
      "Basic YWJjOmRlZg==",
      "Bearer a b",
      "Token abc",
      `Bearer ${"x".repeat(2000)}`,
    ]) {
      expect(bearerToken(h), String(h)).toBeNull();
    }
  });
});
