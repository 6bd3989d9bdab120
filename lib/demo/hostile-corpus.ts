/**
 * Hostile content the console must show as inert text on every broker: markup that would run if it
 * were ever parsed as HTML (script tags, event handlers, `javascript:` URLs, SVG with onload, CSS
 * injection), characters that change how text looks (RTL override, zero-width), a very long line,
 * JSON with `__proto__` / `constructor` keys, and bytes that are not UTF-8. Seeded by
 * lib/demo/hostile.ts into one DLQ per broker; e2e/hostile.spec.ts checks every view of them.
 * Pure data: no broker clients, so tests can import it.
 */

export const HOSTILE = {
  script: `<script>window.__hostile=1;alert("hostile-script")</script>`,
  imgOnerror: `<img src=x onerror="window.__hostile=1;alert('hostile-img')">`,
  jsUrl: `javascript:window.__hostile=1;alert('hostile-url')//`,
  anchor: `<a href="javascript:alert('hostile-a')" id="hostile-a">click me</a>`,
  svg: `<svg onload="window.__hostile=1;alert('hostile-svg')"><circle r="9"/></svg>`,
  css: `</style><style>body{background:url("http://127.0.0.1:9/hostile-css")}</style><div id="hostile-css" style="position:fixed;inset:0;background:red">`,
  rtl: `invoice-\u202Egpj.exe`,
  zeroWidth: `ad\u200Bmin\u200C\u200D\uFEFF-zero-width`,
  longLine: `hostile-long-line-${"W".repeat(12_000)}-end`,
} as const;

export type HostileKey = keyof typeof HOSTILE;

/** Header (or SQS message attribute) name for each corpus entry. */
export const hostileHeader = (k: HostileKey) => `x-hostile-${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** A header *name* that is itself markup (RabbitMQ and Kafka allow any name; SQS does not). */
export const HOSTILE_HEADER_NAME = `<img src=x onerror=alert(document.domain)>`;

/** The exception every hostile letter failed with: survives message normalisation, so it is the group label too. */
export const HOSTILE_EXCEPTION = {
  className: "com.acme.hostile.ScriptInjectionException",
  message: `<svg onload=alert(document.domain)><script>alert(document.cookie)</script>`,
} as const;

/** JSON text with prototype-polluting keys; a parser that merges it naively would pollute Object.prototype. */
export const HOSTILE_JSON = `{"__proto__":{"hostilePolluted":"yes"},"constructor":{"prototype":{"hostilePolluted":"yes"}},"note":"<script>alert('hostile-json')</script>","link":"javascript:alert('hostile-json-link')","password":"<img src=x onerror=alert('hostile-secret')>"}`;

/** The value of the masked fields and headers: hidden by the default masking rules, shown by an admin's reveal. */
export const HOSTILE_SECRET = `<img src=x onerror=alert('hostile-secret')>`;

/** An SVG document as a payload: must be shown as text, never rendered. */
export const HOSTILE_SVG = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert('hostile-svg-body')"><script>alert('hostile-svg-script')</script></svg>`;

/** Every text entry of the corpus on its own line: a plain-text payload. */
export const HOSTILE_TEXT = Object.values(HOSTILE).join("\n");

/** "<script>" followed by bytes that are not UTF-8 (a lone continuation, an overlong lead, 0xFF/0xFE). */
export const HOSTILE_INVALID_UTF8 = Uint8Array.from([
  ...new TextEncoder().encode(`<script>alert('hostile-bytes')</script>`),
  0xc3,
  0x28,
  0xa0,
  0xa1,
  0xff,
  0xfe,
]);

/** Where the corpus lives per broker (names outside other demo and test queues). */
export const HOSTILE_DLQS = {
  rabbitmq: { connectionId: "local-rabbitmq", source: "demo.hostile", dlq: "demo.hostile.dlq" },
  sqs: { connectionId: "local-sqs", source: "demo-hostile", dlq: "demo-hostile-dlq" },
  kafka: { connectionId: "local-kafka", source: "demo.hostile", dlq: "demo.hostile.DLT" },
  pulsar: {
    connectionId: "local-pulsar",
    source: "public/demo/hostile",
    dlq: "public/demo/hostile-hostile-service-DLQ",
  },
} as const;

/** RabbitMQ queue names are any UTF-8 (SQS and Kafka names cannot hold markup): a DLQ whose name is markup. */
export const HOSTILE_NAMED_DLQ = {
  connectionId: "local-rabbitmq",
  source: "demo.hostile-named",
  dlq: `demo.hostile.<img src=x onerror=alert(document.domain)>.dlq`,
} as const;

export interface HostileLetter {
  /** Stable label; also the message id (RabbitMQ) / a `x-hostile-letter` header (SQS, Kafka). */
  label: "hostile-text" | "hostile-json" | "hostile-headers" | "hostile-svg" | "hostile-bytes";
  body: Uint8Array;
  contentType: string;
  /** Header values (strings) by name. */
  headers: Record<string, string>;
  /** Headers SQS cannot carry (names it refuses); RabbitMQ and Kafka get them. */
  extraHeaders?: Record<string, string>;
  /** Headers the default masking rules hide (names with "token"): masked on the letter page, literal in a reveal. */
  secretHeaders?: Record<string, string>;
}

const utf8 = (s: string) => new TextEncoder().encode(s);
const pick = (...keys: HostileKey[]) => Object.fromEntries(keys.map((k) => [hostileHeader(k), HOSTILE[k]]));

/**
 * The letters, each under SQS's limit of 10 message attributes (with the two failure attributes
 * and the label). The invalid-UTF-8 letter cannot be an SQS body (SQS bodies are text): on SQS its
 * bytes travel as a Binary attribute instead.
 */
export const HOSTILE_LETTERS: HostileLetter[] = [
  { label: "hostile-text", body: utf8(HOSTILE_TEXT), contentType: "text/plain", headers: pick("script", "imgOnerror") },
  {
    label: "hostile-json",
    body: utf8(HOSTILE_JSON),
    contentType: "application/json",
    headers: pick("jsUrl", "anchor", "svg", "css"),
  },
  {
    label: "hostile-headers",
    body: utf8("headers only"),
    contentType: "text/plain",
    headers: pick("rtl", "zeroWidth", "longLine"),
    extraHeaders: { [HOSTILE_HEADER_NAME]: HOSTILE.script },
    secretHeaders: { "x-hostile-token": HOSTILE_SECRET },
  },
  { label: "hostile-svg", body: utf8(HOSTILE_SVG), contentType: "image/svg+xml", headers: {} },
  { label: "hostile-bytes", body: HOSTILE_INVALID_UTF8, contentType: "application/octet-stream", headers: {} },
];
