import { describe, expect, it } from "vitest";
import { ROLES } from "@/lib/auth/permissions";
import { DEFAULT_MASKING_RULES } from "@/lib/masking/defaults";
import { maskTextWithRules, textMaskerFor } from "@/lib/masking/engine";
import type { MaskingRule } from "@/lib/masking/types";
import { maskedSearchText, searchMaskingFor } from "./masked-search";

const KEY = Buffer.alloc(32, 5);

// Messages that repeat names, values and shapes from one to the next, as a scan's letters do:
// what a masker remembers from one text must never change how the next is masked.
const MESSAGES = [
  "Read timed out after 3001 ms calling order 17",
  "login failed for ada@example.com with password=hunter2",
  "login failed for ada@example.com with password=other-secret",
  "login failed for bob@example.com with password=hunter2",
  "card 4111 1111 1111 1111 declined; retry with token=abc123",
  "card 4111 1111 1111 1111 declined; retry with token=abc123",
  'body {"user":{"password":"p1","email":"ada@example.com"},"note":"ok"}',
  "user%5Bpassword%5D=s3cret&name=ada+lovelace",
  "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlX2hlcmU",
  "IBAN DE89370400440532013000 rejected",
  "<login><password>x</password><user>ada@example.com</user></login>",
  "nothing to hide here",
  "",
];

/** What each role sees, masked text by text with rules compiled per call. */
function expected(message: string, roles: Array<{ role: string; rules: MaskingRule[] }>) {
  let out: Record<string, string> | null = null;
  for (const { role, rules } of roles) {
    const masked = maskTextWithRules(message, rules, KEY).text;
    if (masked !== message) {
      out ??= {};
      out[role] = masked;
    }
  }
  return message ? out : null;
}

describe("textMaskerFor", () => {
  it("masks every text as maskTextWithRules does, in any order and repeated", () => {
    const mask = textMaskerFor(DEFAULT_MASKING_RULES, KEY);
    for (const text of [...MESSAGES, ...[...MESSAGES].reverse(), ...MESSAGES])
      expect(mask(text)).toEqual(maskTextWithRules(text, DEFAULT_MASKING_RULES, KEY));
  });
});

describe("maskedSearchText", () => {
  it("gives each role its text under the default rules, the same masked once for all", () => {
    const m = searchMaskingFor({ rules: DEFAULT_MASKING_RULES, sensitive: [], version: 1 }, "c1", "q1", KEY);
    expect(m.roles.map((r) => r.role)).toEqual([...ROLES]);
    for (const message of MESSAGES) expect(maskedSearchText(message, m)).toEqual(expected(message, m.roles));
    expect(maskedSearchText("login with password=hunter2", m)).toEqual({
      viewer: "login with password=[hidden]",
      operator: "login with password=[hidden]",
      admin: "login with password=[hidden]",
    });
  });

  it("keeps roles with different rules apart, and follows a changed role list", () => {
    const hashEmails: MaskingRule = {
      id: "emails-hashed",
      description: "",
      enabled: true,
      target: { kind: "detector", detector: "email" },
      action: { kind: "hash" },
      roles: ["operator"],
    };
    const rules: MaskingRule[] = [
      ...DEFAULT_MASKING_RULES.map((r) => ({ ...r, roles: ["viewer" as const] })),
      hashEmails,
    ];
    const m = searchMaskingFor({ rules, sensitive: [], version: 3 }, "c1", "q1", KEY);
    expect(m.roles.map((r) => r.role)).toEqual(["viewer", "operator"]);
    for (const message of MESSAGES) expect(maskedSearchText(message, m)).toEqual(expected(message, m.roles));
    const both = maskedSearchText("mail ada@example.com, password=x", m);
    expect(both?.viewer).toContain("password=[hidden]");
    expect(both?.operator).toContain("password=x");
    expect(both?.operator).not.toContain("ada@example.com");
    expect(both).not.toHaveProperty("admin");

    // The same object given other roles (a caller may rebuild it in place): masked by the new ones.
    m.roles = [{ role: "admin", rules: [hashEmails] }];
    for (const message of MESSAGES) expect(maskedSearchText(message, m)).toEqual(expected(message, m.roles));
    expect(Object.keys(maskedSearchText("mail ada@example.com", m) ?? {})).toEqual(["admin"]);
  });
});
