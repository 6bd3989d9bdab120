import type { MaskingRule } from "./types";

const ALL = ["viewer", "operator", "admin"] as MaskingRule["roles"];

/**
 * Stored on first use, so the admin page shows what is in force. Admins are included: they see
 * unmasked payloads only through an audited reveal.
 */
export const DEFAULT_MASKING_RULES: MaskingRule[] = [
  {
    id: "secret-fields",
    description:
      "Passwords, secrets, tokens, keys and credentials in JSON fields (any depth, JSON inside strings too), XML elements and attributes, form fields and key=value text",
    enabled: true,
    target: {
      kind: "field",
      paths: [
        "*password*",
        "*passwd*",
        "pwd",
        "pass",
        "passphrase",
        "*secret*",
        "*token*",
        "*apikey*",
        "*api_key*",
        "*api-key*",
        "*private_key*",
        "*privatekey*",
        "*private-key*",
        "credentials",
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "pin",
        "cvv",
        "cvc",
      ],
    },
    action: { kind: "hide" },
    roles: ALL,
  },
  {
    id: "auth-headers",
    description: "Authorization, cookies and API-key headers, in message headers and in header dumps in text",
    enabled: true,
    target: {
      kind: "header",
      names: [
        "*authorization*",
        "cookie",
        "set-cookie",
        "*api-key*",
        "*apikey*",
        "*token*",
        "*secret*",
        "*password*",
        "*credential*",
      ],
    },
    action: { kind: "hide" },
    roles: ALL,
  },
  {
    id: "cards",
    description: "Card numbers (Luhn-checked): last 4 digits kept",
    enabled: true,
    target: { kind: "detector", detector: "card" },
    action: { kind: "keep-last", n: 4 },
    roles: ALL,
  },
  {
    id: "emails",
    description: "E-mail addresses: keyed hash, so equal addresses compare equal",
    enabled: true,
    target: { kind: "detector", detector: "email" },
    action: { kind: "hash" },
    roles: ALL,
  },
  {
    id: "ibans",
    description: "IBANs (mod-97-checked): last 4 kept",
    enabled: true,
    target: { kind: "detector", detector: "iban" },
    action: { kind: "keep-last", n: 4 },
    roles: ALL,
  },
  {
    id: "bearer-tokens",
    description: "Bearer, Basic (decoded user:password), Negotiate and NTLM credentials",
    enabled: true,
    target: { kind: "detector", detector: "bearer" },
    action: { kind: "hide" },
    roles: ALL,
  },
  {
    id: "jwts",
    description: "JSON Web Tokens",
    enabled: true,
    target: { kind: "detector", detector: "jwt" },
    action: { kind: "hide" },
    roles: ALL,
  },
  {
    id: "api-keys",
    description: "Common API key shapes (Stripe, AWS, GitHub, Slack, Google, GitLab, OpenAI)",
    enabled: true,
    target: { kind: "detector", detector: "api-key" },
    action: { kind: "hide" },
    roles: ALL,
  },
];
