import type { MaskingRule } from "./types";

const ALL = ["viewer", "operator", "admin"] as MaskingRule["roles"];

/**
 * Stored on first use, so the admin page shows what is in force. Admins are included: they see
 * unmasked payloads only through an audited reveal.
 */
export const DEFAULT_MASKING_RULES: MaskingRule[] = [
  {
    id: "secret-fields",
    description: "Passwords, secrets, tokens and keys in JSON fields (any depth) or key=value text",
    enabled: true,
    target: { kind: "field", paths: ["password", "passwd", "pwd", "*secret*", "*token*", "apikey", "api_key", "api-key", "private_key", "privateKey", "pin", "cvv", "cvc"] },
    action: { kind: "hide" },
    roles: ALL,
  },
  {
    id: "auth-headers",
    description: "Authorization, cookies and API-key headers",
    enabled: true,
    target: { kind: "header", names: ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "*token*", "*secret*", "*password*"] },
    action: { kind: "hide" },
    roles: ALL,
  },
  { id: "cards", description: "Card numbers (Luhn-checked): last 4 digits kept", enabled: true, target: { kind: "detector", detector: "card" }, action: { kind: "keep-last", n: 4 }, roles: ALL },
  { id: "emails", description: "E-mail addresses: keyed hash, so equal addresses compare equal", enabled: true, target: { kind: "detector", detector: "email" }, action: { kind: "hash" }, roles: ALL },
  { id: "ibans", description: "IBANs (mod-97-checked): last 4 kept", enabled: true, target: { kind: "detector", detector: "iban" }, action: { kind: "keep-last", n: 4 }, roles: ALL },
  { id: "bearer-tokens", description: "Bearer credentials", enabled: true, target: { kind: "detector", detector: "bearer" }, action: { kind: "hide" }, roles: ALL },
  { id: "jwts", description: "JSON Web Tokens", enabled: true, target: { kind: "detector", detector: "jwt" }, action: { kind: "hide" }, roles: ALL },
  { id: "api-keys", description: "Common API key shapes (Stripe, AWS, GitHub, Slack, Google, GitLab, OpenAI)", enabled: true, target: { kind: "detector", detector: "api-key" }, action: { kind: "hide" }, roles: ALL },
];
