import { describe, expect, it } from "vitest";
import { DEFAULT_MASKING_RULES } from "./defaults";
import { maskHeaders, maskPayload, maskText } from "./engine";

/**
 * Masking runs on text an attacker chooses (payloads, headers, exception messages), so its cost
 * must grow linearly with the input. Every scanner and detector is written to be linear (see
 * detectors.ts: unbounded runs start only at a run's start, values that are not masked are not
 * read past, each scan moves forward); these tests hold that to account with one megabyte of each
 * shape that used to be, or could become, super-linear.
 *
 * The bound is on this process's CPU time, not the wall clock, so a busy machine does not fail
 * it, and it is generous: every input here takes well under half a second of CPU on a slow
 * machine, while a quadratic scan of a megabyte takes minutes (the former JWT expression needed
 * 4 s for 100 KB of "eyJa-", which is about 7 minutes for 1 MB).
 */

const MB = 1 << 20;
const CPU_BUDGET_MS = 2000;
const ctx = { rules: DEFAULT_MASKING_RULES, role: "operator" as const, hashKey: "test-key" };
const enc = (s: string) => new TextEncoder().encode(s);
const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);

function cpuMs<T>(f: () => T): { ms: number; value: T } {
  const before = process.cpuUsage();
  const value = f();
  const used = process.cpuUsage(before);
  return { ms: (used.user + used.system) / 1000, value };
}

const HOSTILE: Record<string, string> = {
  "JWT-like run without dots": fill("eyJa-"),
  "JWT-like segments that never complete": fill("eyJaaaa.eyJbbbb-"),
  "API-key prefixes": fill("sk-"),
  "e-mail local part without @": fill("a"),
  "e-mail domains of many labels": fill("a@a.a.a.a.a.a.a.a.a.a.a."),
  "IBAN-like groups": fill("DE89 "),
  "card-like digit groups": fill("4111 1111 1111 1111 "),
  "Basic credentials": fill("Basic dXNlcjpwYXNz "),
  "JSON keys without values": fill('"a":'),
  "unterminated secret JSON strings": fill('"password":"'),
  "secret JSON keys at escaping depth 1": fill('\\"password\\":\\"'),
  "an unterminated quote": `"${fill("a")}`,
  "key=key=key": fill("a="),
  "form values to decode": fill("a=%41+"),
  "form values holding cards": fill("a=4111+1111+1111+1111&"),
  "runs of backslashes": `${fill('\\\\\\"')}"`,
  "XML nesting": fill("<a>"),
  "unclosed secret elements": fill("<password>"),
  "attributes without end": fill('<a x="'),
  "CDATA openings": fill("<![CDATA["),
  "escaped markup": fill("&lt;a x=&quot;&gt;&lt;password&gt;"),
  "header lines": fill("Token: x\n"),
  "escaped header lines": fill("\\nToken: "),
  "structures under secret keys": fill('"password":['),
  "nested JSON strings": fill('{"a":"{\\"b\\":'),
};

describe("hostile input costs linear time", () => {
  for (const [name, text] of Object.entries(HOSTILE)) {
    it(`1 MB of ${name}`, () => {
      const { ms, value } = cpuMs(() => maskText(text, ctx));
      expect(ms, `${name}: ${ms.toFixed(0)} ms of CPU`).toBeLessThan(CPU_BUDGET_MS);
      expect(value.text.length).toBeGreaterThan(0);
    }, 60_000);
  }

  it("1 MB payloads: XML nesting, JSON nesting, JSON strings holding JSON; a 1 MB header value", () => {
    const cases: Array<[string, () => unknown]> = [
      ["<a> nesting", () => maskPayload(enc(fill("<a>")), "application/xml", ctx)],
      ["JSON nesting", () => maskPayload(enc("[".repeat(MB / 2) + "]".repeat(MB / 2)), "application/json", ctx)],
      [
        "embedded JSON",
        () =>
          maskPayload(
            enc(
              JSON.stringify(
                Array.from({ length: 20_000 }, () =>
                  JSON.stringify({ a: JSON.stringify({ password: "x".repeat(20) }) }),
                ),
              ),
            ),
            "application/json",
            ctx,
          ),
      ],
      ["header value", () => maskHeaders([{ name: "x-trace", value: { t: "string", v: fill("eyJa-") } }], ctx)],
    ];
    for (const [name, f] of cases) {
      const { ms } = cpuMs(f);
      expect(ms, `${name}: ${ms.toFixed(0)} ms of CPU`).toBeLessThan(CPU_BUDGET_MS);
    }
  }, 120_000);

  it("a 12,000-character line and secrets after megabytes of noise are still masked", () => {
    const line = `hostile-long-line-${"W".repeat(12_000)}-end password=hunter2`;
    expect(maskText(line, ctx).text).toBe(`hostile-long-line-${"W".repeat(12_000)}-end password=[hidden]`);
    for (const noise of [fill("eyJa-"), fill("<a>"), fill("a="), fill("Basic ")]) {
      const out = maskText(
        `${noise} <password>hunter2</password> token=hunter2 Authorization: Basic dXNlcjpodW50ZXIy`,
        ctx,
      ).text;
      expect(out).not.toContain("hunter2");
      expect(out).not.toContain("dXNlcjpodW50ZXIy");
    }
  }, 60_000);
});
