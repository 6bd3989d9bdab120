import { createHash } from "node:crypto";
import type { Role } from "@/lib/auth/permissions";
import { HOSTILE, HOSTILE_SECRET } from "@/lib/demo/hostile-corpus";
import { NO_JOB, q } from "../../test/matrix-kit";
import { TOKEN_MATRIX } from "../../test/token-matrix";
import { type Call, type Caller, callerName, type OriginKind } from "./kit";

/**
 * The live security review's probes, one row each: who asks (a role's session, a role's token,
 * nobody), the request, and what the answer must be. Grouped by the review's areas; the rows that
 * need more than one request (right-versus-wrong guesses, bursts, timings, a user's life) are pairs
 * or custom probes in the spec. Each row is sent as is to the production server.
 */
export const AREAS = [
  "authorization",
  "origin",
  "audit",
  "hostile",
  "path-decoding",
  "masking",
  "repair-previews",
  "webhook-ssrf",
  "disabled-users",
  "rate-limit",
  "pattern-dos",
] as const;
export type Area = (typeof AREAS)[number];

export interface Expect {
  /** One status, a set, or "allowed" (neither 401 nor 403, and below 500). */
  status: number | readonly number[] | "allowed";
  /** Texts the body must hold. */
  has?: ReadonlyArray<string | RegExp>;
  /** Texts the body must not hold (on top of the secrets, stack traces and internal hosts every probe checks). */
  lacks?: readonly string[];
  /** The `error.code` of a JSON refusal (`{ ok: false, error }` or problem details). */
  code?: string;
  /** An audit row with the probe's request id: this action, denied. "none": no row at all. */
  audit?: string | "none";
  /** Header checks: name → expected value or pattern. */
  header?: Record<string, string | RegExp>;
}

export interface RequestProbe {
  kind: "request";
  area: Area;
  name: string;
  as: Caller;
  call: Call;
  expect: Expect;
}

/** A right and a wrong guess of a masked value: the answers must be the same (status and body, ids aside). */
export interface PairProbe {
  kind: "pair";
  area: Area;
  name: string;
  as: Caller;
  right: Call;
  wrong: Call;
  /** The answer must also be this status (so a pair of two refusals for the wrong reason is noticed). */
  status?: number | "allowed";
}

export type TableProbe = RequestProbe | PairProbe;

/** What the table needs from the run: the review's own queues, letters, rules and users. */
export interface Run {
  id: string;
  /** A DLQ where repair is enabled (config: e2e.repair.*.dlq), two letters of one group with masked values. */
  dlq: string;
  letterId: string;
  groupKey: string;
  secret: Secrets;
  /** A queue whose name holds a literal %41, and the queue a second decoding would reach. */
  percentDlq: string;
  decoyDlq: string;
  percentLetterId: string;
  /** An alert rule of the review's own (disabled, never fires) with deliveries that failed. */
  alertRuleId: string;
  tlsDetail: string;
  legacyDetail: string;
  hostile: { rabbitLetterId: string; kafkaLetterId: string };
}

export interface Secrets {
  card: string;
  wrongCard: string;
  cvv: string;
  wrongCvv: string;
  bearer: string;
  wrongBearer: string;
  email: string;
  password: string;
  bodies: string[];
}

export const CONN = "local-rabbitmq";
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** The values that must never come back unmasked, in any answer of the review (reveals are not probed). */
export function neverShown(s: Secrets): string[] {
  return [s.card, s.bearer.split(" ")[1], s.email, s.password, ...s.bodies.map(sha)];
}

/** Internal addresses and credentials no answer may carry (broker and database URLs, their ports). */
export const INTERNAL = [
  "amqp://",
  "postgres://",
  "postgresql://",
  "guest:guest",
  "127.0.0.1:5432",
  "127.0.0.1:5672",
  "127.0.0.1:15672",
  "127.0.0.1:9092",
  "127.0.0.1:9324",
  "127.0.0.1:9325",
  "127.0.0.1:6650",
  "127.0.0.1:8080",
  "localhost:5432",
];

/** A stack trace's frame, in text or escaped in JSON or flight data. */
export const STACK_FRAME =
  /(?:\\n|\n)\s*at (?:async )?[\w$.<>[\] ]+ \((?:\/|node:|file:|webpack)|node_modules[\\/]+(?:next|\.prisma|@prisma)[\\/]/;

const S = (role: Role): Caller => ({ kind: "session", role });
const T = (role: Role): Caller => ({ kind: "token", role });
const ANON: Caller = { kind: "anon" };
const ROLES: Role[] = ["viewer", "operator", "admin"];

// ---------------------------------------------------------------- authorization (tokens over HTTP)

/**
 * The token matrix (test/token-matrix) over HTTP against the production server: every /api/v1
 * route with each role's token, with no token, and with a session cookie alone (never enough for
 * /api/v1). The cookie routes and pages are walked per role by e2e/authorization.spec.ts.
 */
function authorization(): TableProbe[] {
  const rows: TableProbe[] = [];
  for (const row of TOKEN_MATRIX) {
    const call: Call = {
      method: row.method as Call["method"],
      path: row.url,
      body: row.method === "GET" ? undefined : (row.body ?? {}),
      headers: row.method === "GET" ? {} : { "Content-Type": "application/json" },
    };
    const what = `${row.method} ${row.url}`;
    for (const role of ROLES) {
      const allowed = row.public || row.roles.includes(role);
      rows.push({
        kind: "request",
        area: "authorization",
        name: `${what} with a ${role} token`,
        as: T(role),
        call,
        expect: allowed
          ? { status: "allowed" }
          : { status: 403, code: `forbidden:${row.permission}`, audit: row.audit },
      });
    }
    rows.push({
      kind: "request",
      area: "authorization",
      name: `${what} without a token`,
      as: ANON,
      call,
      expect: row.public ? { status: "allowed" } : { status: 401 },
    });
    if (!row.public)
      rows.push({
        kind: "request",
        area: "authorization",
        name: `${what} with an admin's session cookie and no token`,
        as: S("admin"),
        call: { ...call, origin: "own" },
        expect: { status: 401 },
      });
  }
  return rows;
}

// ---------------------------------------------------------------- Origin

const ORIGINS_REFUSED: OriginKind[] = ["none", "empty", "null", "foreign", "lookalike"];

/** Server actions an attacker would forge: each harmless if it ran (unknown ids, stale versions, refused targets). */
function forgeableActions(r: Run): Array<{ path: string; name: string; args: unknown[] }> {
  const repairPage = `/dlqs/${q(CONN)}/${q(r.dlq)}/repair?group=${q(r.groupKey)}`;
  return [
    {
      path: "/profile",
      name: "createTokenAction",
      args: [{ name: `review-${r.id}-forged`, role: "admin", expiresInDays: 1 }],
    },
    { path: "/admin/users", name: "updateUserAction", args: [{ id: NO_JOB, role: "admin" }] },
    {
      path: "/admin/masking",
      name: "saveMaskingRulesAction",
      args: [{ rules: [], sensitive: [], expectedVersion: 999_999 }],
    },
    { path: "/admin/triage-rules", name: "saveRulesAction", args: [{ rules: [], expectedVersion: 999_999 }] },
    {
      path: "/owners",
      name: "saveOwnerAction",
      args: [{ queuePattern: `review-${r.id}-forged`, team: "forged", contact: "forged", position: 100_000 }],
    },
    { path: "/audit", name: "verifyAuditAction", args: [] },
    {
      path: repairPage,
      name: "previewGroupRepairAction",
      args: [
        {
          connectionId: CONN,
          queue: r.dlq,
          selection: { kind: "group", groupKey: r.groupKey },
          patch: { kind: "json-patch", operations: [{ op: "test", path: "/customer/card/cvv", value: r.secret.cvv }] },
        },
      ],
    },
    {
      path: "/alerts/new",
      name: "createAlertRuleAction",
      args: [
        {
          name: `review-${r.id}-forged`,
          kind: "depth_above",
          params: { depth: 1_000_000 },
          queuePattern: `review-${r.id}-none`,
          webhookUrl: "https://169.254.169.254/latest/meta-data/",
          enabled: false,
        },
      ],
    },
  ];
}

/** Cookie-session route handlers that change state (POST, and the other changing methods). */
function sessionRoutes(r: Run): Array<{ method: Call["method"]; path: string; body: unknown; as: Role }> {
  const dlq = { connectionId: CONN, queue: r.dlq };
  return [
    { method: "POST", path: "/api/redrive/plan", body: { ...dlq, selection: { kind: "all" } }, as: "operator" },
    { method: "POST", path: "/api/redrive", body: { ...dlq, selection: { kind: "all" } }, as: "operator" },
    // A DLQ on no broker: were it let through, no scan would read (and hide) the review's letters.
    {
      method: "POST",
      path: "/api/triage/scans",
      body: { connectionId: CONN, queue: "matrix.none.dlq" },
      as: "operator",
    },
    { method: "POST", path: "/api/triage/rules", body: { rules: [], expectedVersion: 999_999 }, as: "admin" },
    { method: "POST", path: `/api/redrive/${NO_JOB}/bulk`, body: {}, as: "operator" },
    { method: "POST", path: `/api/redrive/${NO_JOB}/cancel`, body: {}, as: "operator" },
    { method: "POST", path: `/api/redrive/${NO_JOB}/pause`, body: {}, as: "operator" },
    { method: "POST", path: `/api/redrive/${NO_JOB}/resume`, body: {}, as: "operator" },
    { method: "POST", path: `/api/discard/${NO_JOB}/cancel`, body: {}, as: "admin" },
    { method: "POST", path: `/api/triage/scans/${NO_JOB}/cancel`, body: {}, as: "operator" },
    { method: "PUT", path: "/api/redrive/plan", body: {}, as: "operator" },
    { method: "PATCH", path: "/api/triage/rules", body: {}, as: "admin" },
    { method: "DELETE", path: `/api/redrive/${NO_JOB}`, body: {}, as: "operator" },
  ];
}

function origin(r: Run): TableProbe[] {
  const rows: TableProbe[] = [];
  for (const a of forgeableActions(r)) {
    for (const o of ORIGINS_REFUSED) {
      rows.push({
        kind: "request",
        area: "origin",
        name: `server action ${a.name} on ${a.path.split("?")[0]} as admin, Origin ${o}`,
        as: S("admin"),
        call: { path: a.path, origin: o, action: { name: a.name, args: a.args } },
        expect: { status: 403, code: "forbidden:origin", audit: "auth.origin_refused" },
      });
    }
    rows.push({
      kind: "request",
      area: "origin",
      name: `server action ${a.name} without a session, foreign Origin: refused, nobody to audit`,
      as: ANON,
      call: { path: a.path, origin: "foreign", action: { name: a.name, args: a.args } },
      expect: { status: 403, code: "forbidden:origin", audit: "none" },
    });
  }
  // A form's post (the action id in the body, no Next-Action header) from another site.
  rows.push({
    kind: "request",
    area: "origin",
    name: "a form post to /profile with an action id in its body, foreign Origin",
    as: S("admin"),
    call: { method: "POST", path: "/profile", origin: "foreign", body: { $ACTION_ID_x: "" } },
    expect: { status: 403, code: "forbidden:origin", audit: "auth.origin_refused" },
  });
  for (const s of sessionRoutes(r)) {
    for (const o of ["none", "null", "foreign", "lookalike"] as const) {
      rows.push({
        kind: "request",
        area: "origin",
        name: `${s.method} ${s.path} as ${s.as}, Origin ${o}`,
        as: S(s.as),
        call: {
          method: s.method,
          path: s.path,
          origin: o,
          body: s.body,
          headers: { "Content-Type": "application/json" },
        },
        expect: { status: 403, code: "forbidden:origin", audit: "auth.origin_refused" },
      });
    }
  }
  // The console's own Origin gets past the check (to the route's own answer), for each POST route but the rules.
  for (const s of sessionRoutes(r).filter((x) => x.method === "POST" && x.path !== "/api/triage/rules")) {
    rows.push({
      kind: "request",
      area: "origin",
      name: `${s.method} ${s.path} as ${s.as}, the console's own Origin: not refused for it`,
      as: S(s.as),
      call: {
        method: s.method,
        path: s.path,
        origin: "own",
        body: s.body,
        headers: { "Content-Type": "application/json" },
      },
      expect: { status: [200, 201, 202, 400, 404, 409], lacks: ["forbidden:origin"] },
    });
  }
  return rows;
}

// ---------------------------------------------------------------- masking side channels

function masking(r: Run): TableProbe[] {
  const s = r.secret;
  const dlqQuery = `connectionId=${q(CONN)}&queue=${q(r.dlq)}`;
  const rows: TableProbe[] = [];
  const guesses: Array<[what: string, param: string, right: string, wrong: string]> = [
    ["the masked authorization header", "header", `authorization:${s.bearer}`, `authorization:${s.wrongBearer}`],
    ["the card number in the exception text", "q", s.card, s.wrongCard],
    ["a prefix of the card number", "q", s.card.slice(0, 8), s.wrongCard.slice(0, 8)],
    ["the e-mail address in the exception text", "q", s.email, `x${s.email}`],
    ["the payload's SHA-256", "q", sha(s.bodies[0]), sha(`${s.bodies[0]} `)],
    ["the payload's SHA-256 prefix", "q", sha(s.bodies[0]).slice(0, 16), sha(`${s.bodies[0]} `).slice(0, 16)],
  ];
  const routes: Array<[string, (p: string) => string, Caller[]]> = [
    ["GET /api/triage/letters", (p) => `/api/triage/letters?${dlqQuery}&${p}`, ROLES.map(S)],
    ["GET /api/triage/export (json)", (p) => `/api/triage/export?format=json&${dlqQuery}&${p}`, ROLES.map(S)],
    ["GET /api/v1/letters", (p) => `/api/v1/letters?${dlqQuery}&${p}`, ROLES.map(T)],
  ];
  for (const [what, param, right, wrong] of guesses) {
    for (const [route, url, callers] of routes) {
      for (const as of callers) {
        rows.push({
          kind: "pair",
          area: "masking",
          name: `${route}: ${what}, right against wrong guess, as ${callerName(as)}`,
          as,
          right: { path: url(`${param}=${q(right)}`) },
          wrong: { path: url(`${param}=${q(wrong)}`) },
          // A value masking would change is refused as a header filter; text is searched as the role sees it.
          status: param === "header" ? 403 : 200,
        });
      }
    }
  }
  const letter = `/dlqs/${q(CONN)}/${q(r.dlq)}/letters/${q(r.letterId)}`;
  const plain: Array<[string, Caller[], Call, Expect]> = [
    [
      "group by the masked header",
      ROLES.map(S),
      { path: `/api/triage/groups?${dlqQuery}&by=header:authorization` },
      { status: 200 },
    ],
    [
      "v1 groups by the masked header",
      ROLES.map(T),
      { path: `/api/v1/groups?${dlqQuery}&by=header:authorization` },
      { status: 200 },
    ],
    [
      "v1 letters of the DLQ (broker read)",
      ROLES.map(T),
      { path: `/api/v1/dlqs/${q(CONN)}/${q(r.dlq)}/letters` },
      { status: 200 },
    ],
    [
      "v1 one letter",
      ROLES.map(T),
      { path: `/api/v1/dlqs/${q(CONN)}/${q(r.dlq)}/letters/${q(r.letterId)}` },
      { status: 200, has: ["hmac:"] },
    ],
    ["the letter page (HTML and flight data)", ROLES.map(S), { path: letter }, { status: 200, has: ["hmac:"] }],
    ["the triage export as CSV", ROLES.map(S), { path: `/api/triage/export?format=csv&${dlqQuery}` }, { status: 200 }],
    [
      "the triage export with payloads",
      [S("operator"), S("admin")],
      { path: `/api/triage/export?format=json&payload=1&${dlqQuery}` },
      { status: 200 },
    ],
    [
      "the masked payload download",
      [S("operator"), S("admin")],
      { path: `/api/dlqs/${q(CONN)}/${q(r.dlq)}/letters/${q(r.letterId)}/payload` },
      { status: 200, header: { "x-content-type-options": "nosniff" } },
    ],
    [
      "the archive export",
      ROLES.map(S),
      { path: `/api/archive/export?format=json&queue=${q(r.dlq)}` },
      { status: 200 },
    ],
    ["the triage page", ROLES.map(S), { path: `/dlqs/${q(CONN)}/${q(r.dlq)}/triage` }, { status: 200 }],
    ["the letters page", ROLES.map(S), { path: `/dlqs/${q(CONN)}/${q(r.dlq)}` }, { status: 200 }],
  ];
  for (const [what, callers, call, expect] of plain)
    for (const as of callers)
      rows.push({
        kind: "request",
        area: "masking",
        name: `${what} as ${callerName(as)}`,
        as,
        call,
        expect,
      });
  rows.push({
    kind: "request",
    area: "masking",
    name: "a viewer's payload download is refused",
    as: S("viewer"),
    call: { path: `/api/dlqs/${q(CONN)}/${q(r.dlq)}/letters/${q(r.letterId)}/payload` },
    expect: { status: 403, code: "forbidden:letter:read-payload", audit: "letter.payload_download" },
  });
  rows.push({
    kind: "request",
    area: "masking",
    name: "a viewer's triage export with payloads is refused",
    as: S("viewer"),
    call: { path: `/api/triage/export?format=json&payload=1&${dlqQuery}` },
    expect: { status: 403 },
  });
  return rows;
}

// ---------------------------------------------------------------- repair previews

function repairPreviews(r: Run): TableProbe[] {
  const s = r.secret;
  const repairPage = `/dlqs/${q(CONN)}/${q(r.dlq)}/repair?group=${q(r.groupKey)}`;
  const letterRepair = `/dlqs/${q(CONN)}/${q(r.dlq)}/letters/${q(r.letterId)}/repair`;
  const preview = (patch: unknown): Call => ({
    path: repairPage,
    origin: "own",
    action: {
      name: "previewGroupRepairAction",
      args: [{ connectionId: CONN, queue: r.dlq, selection: { kind: "group", groupKey: r.groupKey }, patch }],
    },
  });
  const plan = (edit: Record<string, unknown>): Call => ({
    path: letterRepair,
    origin: "own",
    action: { name: "planRepairAction", args: [{ connectionId: CONN, queue: r.dlq, letterId: r.letterId, ...edit }] },
  });
  const redrivePlan = (patch: unknown): Call => ({
    method: "POST",
    path: "/api/redrive/plan",
    origin: "own",
    headers: { "Content-Type": "application/json" },
    body: {
      connectionId: CONN,
      queue: r.dlq,
      selection: { kind: "group", groupKey: r.groupKey },
      repair: { patch, reason: "review probe" },
    },
  });
  const testOp = (path: string, value: unknown) => ({ kind: "json-patch", operations: [{ op: "test", path, value }] });
  const replace = (path: string, value: unknown) => ({
    kind: "json-patch",
    operations: [{ op: "replace", path, value }],
  });
  const body = (cvv: string) => s.bodies[0].replace(`"cvv":"${s.cvv}"`, `"cvv":"${cvv}"`);
  const cases: Array<[string, Call, Call]> = [
    [
      "group preview: a test of the masked card number",
      preview(testOp("/customer/card/number", s.card)),
      preview(testOp("/customer/card/number", s.wrongCard)),
    ],
    [
      "group preview: a test of the masked CVV",
      preview(testOp("/customer/card/cvv", s.cvv)),
      preview(testOp("/customer/card/cvv", s.wrongCvv)),
    ],
    [
      "group preview: a replace of the masked CVV",
      preview(replace("/customer/card/cvv", s.cvv)),
      preview(replace("/customer/card/cvv", s.wrongCvv)),
    ],
    [
      "group preview: a merge patch of the masked CVV",
      preview({ kind: "merge-patch", patch: { customer: { card: { cvv: s.cvv } } } }),
      preview({ kind: "merge-patch", patch: { customer: { card: { cvv: s.wrongCvv } } } }),
    ],
    [
      "letter plan: the payload as it is or with another CVV",
      plan({ body: { kind: "json", text: body(s.cvv) } }),
      plan({ body: { kind: "json", text: body(s.wrongCvv) } }),
    ],
    [
      "letter plan: the masked header as it is or changed",
      plan({ setHeaders: { authorization: s.bearer } }),
      plan({ setHeaders: { authorization: s.wrongBearer } }),
    ],
    [
      "redrive plan with a repair: a test of the masked CVV",
      redrivePlan(testOp("/customer/card/cvv", s.cvv)),
      redrivePlan(testOp("/customer/card/cvv", s.wrongCvv)),
    ],
    [
      "redrive plan with a repair: a test of the masked card number",
      redrivePlan(testOp("/customer/card/number", s.card)),
      redrivePlan(testOp("/customer/card/number", s.wrongCard)),
    ],
  ];
  const rows: TableProbe[] = [];
  for (const [what, right, wrong] of cases)
    for (const role of ROLES)
      rows.push({ kind: "pair", area: "repair-previews", name: `${what}, as ${role}`, as: S(role), right, wrong });
  // The request: a copy (and a move) from the masked CVV into a visible field shows it masked.
  for (const op of ["copy", "move"] as const)
    rows.push({
      kind: "request",
      area: "repair-previews",
      name: `group preview as admin: a ${op} from the masked CVV into /note shows it masked`,
      as: S("admin"),
      call: preview({ kind: "json-patch", operations: [{ op, from: "/customer/card/cvv", path: "/note" }] }),
      expect: { status: 200, has: ['"ok":true', "[hidden]"], lacks: [`"${s.cvv}"`, `\\"${s.cvv}\\"`] },
    });
  rows.push({
    kind: "request",
    area: "repair-previews",
    name: "group preview as admin: a test of the masked CVV is refused (no reveal for a group)",
    as: S("admin"),
    call: preview(testOp("/customer/card/cvv", s.cvv)),
    expect: { status: 200, code: "forbidden:repair-masked" },
  });
  return rows;
}

// ---------------------------------------------------------------- webhook SSRF

/** Webhook targets no rule may name: metadata services, loopback and private addresses in every spelling, other schemes. */
export const SSRF_TARGETS = [
  "http://169.254.169.254/latest/meta-data/",
  "https://169.254.169.254/latest/meta-data/",
  "https://169.254.170.2/v2/credentials",
  "https://100.100.100.200/latest/meta-data/",
  "https://[fd00:ec2::254]/latest/meta-data/",
  "https://metadata.google.internal/computeMetadata/v1/",
  "https://[::ffff:169.254.169.254]/",
  "https://0xa9.0xfe.0xa9.0xfe/",
  "https://2852039166/",
  "https://127.0.0.1/hook",
  "https://127.1/hook",
  "https://2130706433/hook",
  "https://0x7f.0.0.1/hook",
  "https://0177.0.0.1/hook",
  "https://localhost/hook",
  "https://[::1]/hook",
  "https://[::ffff:127.0.0.1]/hook",
  "https://0.0.0.0/hook",
  "https://[::]/hook",
  "https://10.0.0.1/hook",
  "https://192.168.1.1/hook",
  "https://172.16.0.1/hook",
  "https://[fe80::1]/hook",
  "https://224.0.0.1/hook",
  "http://127.0.0.1:5432/",
  "https://user:secret@127.0.0.1/hook",
  "file:///etc/passwd",
  "gopher://127.0.0.1:6379/_INFO",
  "ftp://127.0.0.1/",
  "javascript:alert(1)",
];

function webhookSsrf(r: Run): TableProbe[] {
  const rows: TableProbe[] = SSRF_TARGETS.map((url, i) => ({
    kind: "request" as const,
    area: "webhook-ssrf" as const,
    name: `an admin's alert rule to ${url} is refused`,
    as: S("admin"),
    call: {
      path: "/alerts/new",
      origin: "own" as const,
      action: {
        name: "createAlertRuleAction",
        args: [
          {
            name: `review-${r.id}-ssrf-${i}`,
            kind: "depth_above",
            params: { depth: 1_000_000 },
            queuePattern: `review-${r.id}-none`,
            webhookUrl: url,
            enabled: false,
          },
        ],
      },
    },
    expect: { status: 200, has: ['"ok":false'], lacks: ['"ok":true'] },
  }));
  rows.push({
    kind: "request",
    area: "webhook-ssrf",
    name: "changing the review's own rule to the metadata service is refused",
    as: S("admin"),
    call: {
      path: `/alerts/${r.alertRuleId}`,
      origin: "own",
      action: {
        name: "updateAlertRuleAction",
        args: [
          {
            id: r.alertRuleId,
            name: `review-${r.id}-rule`,
            kind: "depth_above",
            params: { depth: 1_000_000 },
            queuePattern: `review-${r.id}-none`,
            webhookUrl: "https://169.254.169.254/latest/meta-data/",
            enabled: false,
          },
        ],
      },
    },
    expect: { status: 200, has: ['"ok":false'], lacks: ['"ok":true'] },
  });
  // Item 7: the failure's class for everyone; its words (certificate names, addresses) for admins only.
  for (const role of ["viewer", "operator"] as const) {
    for (const path of [`/alerts/${r.alertRuleId}`, "/alerts"])
      rows.push({
        kind: "request",
        area: "webhook-ssrf",
        name: `${path} as ${role}: delivery errors by class, without their detail`,
        as: S(role),
        call: { path },
        expect: {
          status: 200,
          has: path === "/alerts" ? [] : ["TLS: certificate name mismatch"],
          lacks: [r.tlsDetail, r.legacyDetail],
        },
      });
  }
  rows.push({
    kind: "request",
    area: "webhook-ssrf",
    name: "the rule's page as admin: the class and the detail",
    as: S("admin"),
    call: { path: `/alerts/${r.alertRuleId}` },
    expect: { status: 200, has: ["TLS: certificate name mismatch", r.tlsDetail] },
  });
  rows.push({
    kind: "request",
    area: "webhook-ssrf",
    name: "a viewer's test send of the rule is refused",
    as: S("viewer"),
    call: {
      path: `/alerts/${r.alertRuleId}`,
      origin: "own",
      action: { name: "sendTestAlertAction", args: [{ id: r.alertRuleId }] },
    },
    expect: { status: 200, code: "forbidden:ops:manage", audit: "alert.test_send" },
  });
  return rows;
}

// ---------------------------------------------------------------- audit

function audit(): TableProbe[] {
  const verify = (role: Role): RequestProbe => ({
    kind: "request",
    area: "audit",
    name: `verify the chain as ${role}`,
    as: S(role),
    call: { path: "/audit", origin: "own", action: { name: "verifyAuditAction", args: [] } },
    expect:
      role === "admin"
        ? { status: 200, has: ['"ok":true'], lacks: ['"ok":false'] }
        : { status: 200, code: "forbidden:audit:verify", audit: "audit.verify" },
  });
  return [
    verify("viewer"),
    verify("operator"),
    verify("admin"),
    {
      kind: "request",
      area: "audit",
      name: "the audit page as viewer is refused",
      as: S("viewer"),
      call: { path: "/audit" },
      expect: { status: 403, lacks: ['data-testid="audit-row"'] },
    },
    {
      kind: "request",
      area: "audit",
      name: "the audit export as viewer is refused",
      as: S("viewer"),
      call: { path: "/api/audit/export?format=json" },
      expect: { status: 403, code: "forbidden:audit:read", audit: "audit.export" },
    },
    {
      kind: "request",
      area: "audit",
      name: "v1 audit as a viewer token is refused",
      as: T("viewer"),
      call: { path: "/api/v1/audit?limit=5" },
      expect: { status: 403, code: "forbidden:audit:read", audit: "audit.view" },
    },
    // Before the masking area types its guesses (filters are audited with the text searched for).
    ...(["operator", "admin"] as const).map(
      (role): RequestProbe => ({
        kind: "request",
        area: "audit",
        name: `the audit export as ${role}: no masked value of the review's letters`,
        as: S(role),
        call: { path: "/api/audit/export?format=json" },
        expect: { status: 200 },
      }),
    ),
    {
      kind: "request",
      area: "audit",
      name: "v1 audit export (ndjson) as an operator token",
      as: T("operator"),
      call: { path: "/api/v1/audit/export?format=ndjson" },
      expect: { status: 200 },
    },
  ];
}

// ---------------------------------------------------------------- hostile corpus

function hostile(r: Run): TableProbe[] {
  const markup = [HOSTILE.script, HOSTILE.imgOnerror, HOSTILE.svg, "<script>alert(document.cookie)</script>"];
  const rabbit = { c: "local-rabbitmq", dlq: "demo.hostile.dlq", id: r.hostile.rabbitLetterId };
  const kafka = { c: "local-kafka", dlq: "demo.hostile.DLT", id: r.hostile.kafkaLetterId };
  const rows: TableProbe[] = [];
  for (const d of [rabbit, kafka]) {
    const base = `/dlqs/${q(d.c)}/${q(d.dlq)}`;
    rows.push(
      {
        kind: "request",
        area: "hostile",
        name: `v1 letters of ${d.dlq} as a viewer token: JSON, the secret masked`,
        as: T("viewer"),
        call: { path: `/api/v1/dlqs/${q(d.c)}/${q(d.dlq)}/letters` },
        expect: { status: 200, header: { "content-type": /^application\/json/ }, lacks: [HOSTILE_SECRET] },
      },
      {
        kind: "request",
        area: "hostile",
        name: `the letters page of ${d.dlq} as viewer: markup only as text`,
        as: S("viewer"),
        call: { path: base },
        expect: { status: 200, lacks: markup },
      },
      {
        kind: "request",
        area: "hostile",
        name: `a letter page of ${d.dlq} as operator: markup only as text, the secret masked`,
        as: S("operator"),
        call: { path: `${base}/letters/${q(d.id)}` },
        expect: { status: 200, lacks: [...markup, HOSTILE_SECRET] },
      },
      {
        kind: "request",
        area: "hostile",
        name: `a letter's download from ${d.dlq} as operator: an attachment, never HTML`,
        as: S("operator"),
        call: { path: `/api${base}/letters/${q(d.id)}/payload` },
        expect: {
          status: 200,
          header: {
            "content-disposition": /^attachment/,
            "x-content-type-options": "nosniff",
            "content-type": /^(?!text\/html)/,
          },
          lacks: [HOSTILE_SECRET],
        },
      },
      {
        kind: "request",
        area: "hostile",
        name: `the triage page of ${d.dlq} as viewer: markup only as text`,
        as: S("viewer"),
        call: { path: `${base}/triage` },
        expect: { status: 200, lacks: markup },
      },
    );
  }
  rows.push({
    kind: "request",
    area: "hostile",
    name: "the DLQ list as viewer: a DLQ named with markup is text",
    as: S("viewer"),
    call: { path: "/" },
    expect: { status: 200, lacks: markup },
  });
  return rows;
}

// ---------------------------------------------------------------- path decoding

function pathDecoding(r: Run): TableProbe[] {
  const once = q(r.percentDlq);
  const twice = q(q(r.percentDlq));
  const id = q(r.percentLetterId);
  const rows: TableProbe[] = [
    {
      kind: "request",
      area: "path-decoding",
      name: "v1 letters of a queue named with %41, encoded once: that queue",
      as: T("viewer"),
      call: { path: `/api/v1/dlqs/${CONN}/${once}/letters` },
      expect: { status: 200, has: [r.percentLetterId], lacks: ["decoy-"] },
    },
    {
      kind: "request",
      area: "path-decoding",
      name: "v1 one letter of it, encoded once",
      as: T("viewer"),
      call: { path: `/api/v1/dlqs/${CONN}/${once}/letters/${id}` },
      expect: { status: 200, has: [r.percentLetterId] },
    },
    {
      kind: "request",
      area: "path-decoding",
      name: "the letters page of it, encoded once",
      as: S("viewer"),
      call: { path: `/dlqs/${CONN}/${once}` },
      expect: { status: 200, lacks: ["decoy-"] },
    },
    {
      kind: "request",
      area: "path-decoding",
      name: "its download (cookie route), encoded once",
      as: S("operator"),
      call: { path: `/api/dlqs/${CONN}/${once}/letters/${id}/payload` },
      expect: { status: 200, lacks: ["decoy-"] },
    },
  ];
  const wrong: Array<[string, string]> = [
    [
      "v1 letters, the queue encoded twice (a second decoding would reach the %41 queue)",
      `/api/v1/dlqs/${CONN}/${twice}/letters`,
    ],
    ["v1 one letter, the queue encoded twice", `/api/v1/dlqs/${CONN}/${twice}/letters/${id}`],
    ["v1 letters, a double-encoded traversal", `/api/v1/dlqs/${CONN}/sec..%252F..%252F${q(r.dlq)}/letters`],
    ["v1 letters, a triple-encoded slash", `/api/v1/dlqs/${CONN}/${q(r.dlq)}%25252F..%25252F/letters`],
    ["v1 letters, double-encoded dots", `/api/v1/dlqs/${CONN}/%252e%252e%252f${q(r.dlq)}/letters`],
  ];
  for (const [what, path] of wrong)
    rows.push({
      kind: "request",
      area: "path-decoding",
      name: what,
      as: T("viewer"),
      call: { path },
      expect: { status: 404, lacks: ["decoy-", r.percentLetterId, r.letterId] },
    });
  rows.push(
    {
      kind: "request",
      area: "path-decoding",
      name: "a download with the queue encoded twice (cookie route)",
      as: S("operator"),
      call: { path: `/api/dlqs/${CONN}/${twice}/letters/${id}/payload` },
      expect: { status: [400, 404], lacks: ["decoy-"] },
    },
    {
      kind: "request",
      area: "path-decoding",
      name: "the letters page with the queue encoded twice",
      as: S("viewer"),
      call: { path: `/dlqs/${CONN}/${twice}` },
      expect: { status: [200, 404], lacks: ["decoy-", 'data-testid="letter-row"'] },
    },
  );
  return rows;
}

export function tableProbes(r: Run): TableProbe[] {
  return [
    ...authorization(),
    ...origin(r),
    ...masking(r),
    ...repairPreviews(r),
    ...webhookSsrf(r),
    ...audit(),
    ...hostile(r),
    ...pathDecoding(r),
  ];
}
