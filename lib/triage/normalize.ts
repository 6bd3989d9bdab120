/**
 * Pure text normalisation for grouping: exception messages with their variable parts replaced by
 * placeholders, and stack traces (Java, .NET, Python, Node, Go) reduced to an exception chain and
 * the root cause's frames. Same shape of failure in, same string out: these outputs feed the
 * grouping key, so any change to them regroups the index (bump GROUPING_VERSION in grouping.ts).
 */

export const MAX_MESSAGE_LENGTH = 300;
/** Regexes below are linear, but a capped input bounds the work on multi-megabyte messages. */
const MAX_INPUT = 4000;
const MAX_STACK = 64_000;

// --- messages -----------------------------------------------------------------------------------

const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*";
const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*";

/**
 * Applied in order: wider shapes first, so a timestamp is not eaten as three numbers. Each comes
 * with what it cannot match without (a substring, or a digit): a cheap test skips the regex, most
 * of which would otherwise scan the whole message (about 5 µs of a scan's time per letter).
 */
const DIGIT = /\d/;
/** Whitespace that `/\s+/g → " "` changes: any but a single space. */
const UNEVEN_SPACE = /[^\S ]|\s\s/;
const REPLACEMENTS: Array<[RegExp, string, string | RegExp]> = [
  // Quoted values; an apostrophe inside a word ("can't") does not open a quote. Python's
  // 'NoneType' is the same in every message and says "null dereference": kept.
  [/(?<![\w'])'(?!NoneType')[^'\n]{0,1000}'(?!\w)/g, "<str>", "'"],
  [/"[^"\n]{0,1000}"/g, "<str>", '"'],
  [/`[^`\n]{0,1000}`/g, "<str>", "`"],
  // URLs keep scheme, host and path; the query and fragment are always variable.
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s?#<>'"]*)[?#][^\s<>'"]*/gi, "$1?<query>", "://"],
  [/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, "<email>", "@"],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>", "-"],
  [
    /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?:\s?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2})\b)?/g,
    "<ts>",
    "-",
  ],
  [
    new RegExp(
      `\\b${DAY},?\\s+\\d{1,2}\\s+${MONTH}\\s+\\d{4}\\s+\\d{2}:\\d{2}:\\d{2}(?:\\s+(?:GMT|UTC|[+-]\\d{4}))?`,
      "g",
    ),
    "<ts>",
    ":",
  ],
  [
    new RegExp(`\\b${DAY}\\s+${MONTH}\\s+\\d{1,2}\\s+\\d{2}:\\d{2}:\\d{2}(?:\\s+[A-Z]{2,5})?\\s+\\d{4}`, "g"),
    "<ts>",
    ":",
  ], // java.util.Date
  [/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, "<ts>", ":"],
  [/\b1\d{12}\b/g, "<ts>", DIGIT], // epoch millis, 2001–2286
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g, "<ip>", "."],
  [/(?<![\w:])(?=[0-9a-f:]*\d)(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}(?![\w:])/gi, "<ip>", ":"],
  [
    /(?<![\w:])(?=[0-9a-f:]*\d)(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?(?![\w:])/gi,
    "<ip>",
    "::",
  ],
  [/\b0x[0-9a-f]+\b/gi, "<hex>", /0x/i],
  [/(?<=\w)@[0-9a-f]{1,16}\b/gi, "@<hex>", "@"], // Java identity hash: com.foo.Bar@1b6d3586
  // Hex ids and hashes. From 8 characters a run of digits counts too: some hex ids happen to have no
  // letter, and must not fall into another group. Shorter, only mixed runs ("a1b2c3d"); "facade" is a word.
  [/\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi, "<hex>", DIGIT],
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,7}\b/gi, "<hex>", DIGIT],
  // Long random tokens (base62 ids, API request ids).
  [/\b(?=[A-Za-z0-9]*\d[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{16,}\b/g, "<id>", DIGIT],
];

/**
 * Digits that carry meaning, kept through the number pass: HTTP status codes (503 and 400 are
 * different failures, and classification reads them) and names with digits in them.
 */
const KEEP =
  /\b(?:(?:HTTP(?:\/\d(?:\.\d)?)?|status(?:[ _]?code)?|response code)[\s:=]{0,3}[1-5]\d\d\b|utf-?(?:8|16)|base64|sha-?(?:1|256|384|512)|md5|s3|ec2|ipv[46]|log4j2?|u?int(?:8|16|32|64)|float(?:32|64)|oauth2|http\/[12](?:\.[01])?|tls\s?v?1\.[0-3]|k8s|i18n)\b/gi;
const PRIVATE = /[\uE000-\uF8FF]/g;

/** Replaces placeholders' lists ("<num>, <num>, <num>") with one, so list length does not split groups. */
const LIST = /<(\w+)>(?:\s*[,;|]\s*<\1>)+/g;

/** Exception message with its variable parts replaced by placeholders; see the module comment. */
export function normalizeMessage(message: string): string {
  let s = message.slice(0, MAX_INPUT).replace(PRIVATE, "");
  for (const [re, to, needs] of REPLACEMENTS)
    if (typeof needs === "string" ? s.includes(needs) : needs.test(s)) s = s.replace(re, to);
  // Every KEEP alternative holds a digit.
  if (DIGIT.test(s)) {
    const kept: string[] = [];
    s = s.replace(KEEP, (m) => `\uE000${String.fromCharCode(0xe100 + kept.push(m) - 1)}\uE001`);
    s = s.replace(/\d+(?:[.,]\d+)*/g, "<num>");
    if (kept.length) s = s.replace(/\uE000(.)\uE001/g, (_, c: string) => kept[c.charCodeAt(0) - 0xe100]);
  }
  if (s.includes("<")) s = s.replace(LIST, "<$1>");
  // Most messages are already single-spaced: replacing " " by " " would still build a new string.
  if (UNEVEN_SPACE.test(s)) s = s.replace(/\s+/g, " ");
  s = s.trim();
  return s.length > MAX_MESSAGE_LENGTH ? `${s.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : s;
}

// --- stack traces --------------------------------------------------------------------------------

export type StackLanguage = "java" | "dotnet" | "python" | "node" | "go";

export interface ParsedFrame {
  /** Normalised: no line numbers, arguments, paths' deployment prefixes or generated ids. */
  name: string;
  /** False for runtime, framework and library frames (JDK, System.*, site-packages, node_modules…). */
  app: boolean;
}

export interface ParsedStack {
  language: StackLanguage;
  /** Outermost (as thrown) first, root cause last. */
  chain: Array<{ exceptionClass: string | null; message: string | null }>;
  /** The root cause's frames, innermost (where it was thrown) first. */
  frames: ParsedFrame[];
}

/** The text the stack parsers read: capped, without private-use characters. */
const stackText = (s: string) => s.slice(0, MAX_STACK).replace(PRIVATE, "");
/** Lines capped too: frame patterns backtrack on pathological single lines. */
const linesOf = (text: string) => text.split(/\r?\n/).map((l) => l.slice(0, 2000));
const lines = (s: string) => linesOf(stackText(s));

/** "pkg.Class: message" → parts. `loose` accepts bare words ("KeyError"), which Python prints. */
function splitHeader(text: string, loose = false): { exceptionClass: string | null; message: string | null } | null {
  const m = /^\s*([A-Za-z_$][\w$]*(?:[.+$][A-Za-z_$][\w$`]*)*)(?::\s?([\s\S]*))?$/.exec(text);
  if (!m) return null;
  const cls = m[1];
  if (!loose && !(cls.includes(".") || /(Exception|Error|Throwable|Fault|Failure)$/.test(cls))) return null;
  const message = m[2]?.trim() ? m[2].trim() : null;
  return { exceptionClass: cls, message };
}

// Java / Kotlin / Scala ------------------------------------------------------------------------

const JAVA_FRAME =
  /^\s*at\s+([^\s(]+)\((?:[^()]*\.(?:java|kt|kts|scala|groovy|clj)(?::\d+)?|Native Method|Unknown Source|<generated>)\)/;
const JAVA_MORE = /^\s*\.\.\.\s+(\d+)\s+(?:more|common frames omitted)/;
const JAVA_LIB =
  /^(?:java|javax|jdk|sun|com\.sun|kotlin|kotlinx|scala|groovy|org\.springframework|org\.apache|org\.hibernate|org\.postgresql|com\.mysql|com\.zaxxer|com\.fasterxml|io\.netty|reactor|io\.micrometer|io\.grpc|okhttp3|feign|retrofit2|software\.amazon|com\.amazonaws|com\.rabbitmq|io\.opentelemetry|brave|net\.bytebuddy|org\.junit)\.|\$Proxy|GeneratedMethodAccessor|\$\$Lambda/;

export function normalizeJavaFrame(raw: string): string {
  return raw
    .replace(/\$\$Lambda(?:\$\d+)?(?:\/0x[0-9a-f]+)?/gi, "$$$$Lambda")
    .replace(/^[\w.@-]*\/\/?/, "") // module prefix: java.base@17/, app//
    .replace(/lambda\$(\w+?)\$\d+/g, "lambda$$$1")
    .replace(/lambda\$\d+/g, "lambda")
    .replace(/\$\$([A-Za-z]+)\$\$\w+/g, "$$$$$1") // $$EnhancerBySpringCGLIB$$1a2b3c, $$SpringCGLIB$$0
    .replace(/\$(HibernateProxy|ByteBuddy)\$\w+/g, "$$$1")
    .replace(/\$Proxy\d+/g, "$$Proxy")
    .replace(/GeneratedMethodAccessor\d+/g, "GeneratedMethodAccessor")
    .replace(/\$\d+(?=[.$]|$)/g, "$$<n>"); // anonymous classes: Bar$1.run
}

function parseJava(ls: string[]): ParsedStack | null {
  type Section = {
    exceptionClass: string | null;
    message: string | null;
    frames: string[];
    more: number;
    header: string[];
  };
  const sections: Section[] = [];
  let current: Section | null = null;
  let suppressed = false;
  for (const line of ls) {
    const cause = /^(?:Caused by:|\s*\[cause\]:)\s*(.*)$/.exec(line);
    if (cause || !current) {
      if (!cause && !line.trim()) continue;
      suppressed = false;
      const header = (cause ? cause[1] : line).replace(/^Exception in thread "[^"]*"\s+/, "");
      current = { exceptionClass: null, message: null, frames: [], more: 0, header: [header] };
      sections.push(current);
      continue;
    }
    if (/^\s+Suppressed:/.test(line)) suppressed = true;
    if (suppressed) continue;
    const frame = JAVA_FRAME.exec(line);
    const more = frame ? null : JAVA_MORE.exec(line);
    if (frame) current.frames.push(frame[1]);
    else if (more) current.more = Number(more[1]);
    else if (current.frames.length === 0) current.header.push(line); // multi-line messages
  }
  if (!sections.some((s) => s.frames.length)) return null;
  // "... N more": the root's last N frames are the enclosing exception's last N.
  let full: string[] = [];
  for (const s of sections) {
    full = s.frames.concat(s.more > 0 ? full.slice(Math.max(0, full.length - s.more)) : []);
    Object.assign(
      s,
      splitHeader(s.header.join("\n"), true) ?? { exceptionClass: null, message: s.header.join("\n").trim() || null },
    );
  }
  return {
    language: "java",
    chain: sections.map(({ exceptionClass, message }) => ({ exceptionClass, message })),
    frames: full.map(javaFrame),
  };
}

/**
 * Frames repeat from letter to letter where messages do not: a bounded memo of raw frame → parsed
 * frame skips normalizeJavaFrame's nine replaces. The frames are shared, read-only like every parse.
 */
const FRAME_MEMO_MAX = 4096;
const javaFrames = new Map<string, ParsedFrame>();

function javaFrame(raw: string): ParsedFrame {
  let f = javaFrames.get(raw);
  if (!f) {
    const name = normalizeJavaFrame(raw);
    f = { name, app: !JAVA_LIB.test(name) };
    if (javaFrames.size >= FRAME_MEMO_MAX) javaFrames.clear();
    if (raw.length <= 1000) javaFrames.set(raw, f);
  }
  return f;
}

// .NET -------------------------------------------------------------------------------------------

const DOTNET_FRAME = /^\s*at\s+(.+?)\((?:[^()]|\([^()]*\))*\)(?:\s+in\s+.+?:line\s+\d+)?\s*$/;
const DOTNET_LIB =
  /^(?:System|Microsoft|Newtonsoft|Npgsql|Polly|MassTransit|NServiceBus|Confluent|Amazon|RabbitMQ\.Client|Grpc|StackExchange|Dapper)\./;

export function normalizeDotnetFrame(raw: string): string {
  return raw
    .replace(/\.<(\w+)>d__\d+\.MoveNext$/, ".$1") // async state machine
    .replace(/<>c__DisplayClass\d+_\d+\.|<>c\./g, "")
    .replace(/<(\w+)>g__(\w+)\|\d+_\d+/g, "$1.$2") // local function
    .replace(/<(\w+)>b__\d+(?:_\d+)?/g, "$1.<lambda>");
}

function parseDotnet(ls: string[]): ParsedStack | null {
  const firstFrame = ls.findIndex((l) => DOTNET_FRAME.test(l));
  if (firstFrame < 0) return null;
  const header = ls
    .slice(0, firstFrame)
    .join("\n")
    .replace(/^\s*Unhandled exception\.\s*/, "");
  // Inner exceptions print inside the header: "Outer: msg ---> Inner: msg"; their frames print first.
  const chain = header
    .split(/\s*--->\s*/)
    .map((h) => splitHeader(h.trim(), true) ?? { exceptionClass: null, message: h.trim() || null });
  const frames: ParsedFrame[] = [];
  for (const l of ls.slice(firstFrame)) {
    if (/---\s*End of inner exception stack trace\s*---/.test(l)) break;
    const m = DOTNET_FRAME.exec(l);
    if (m) {
      const name = normalizeDotnetFrame(m[1].trim());
      frames.push({ name, app: !DOTNET_LIB.test(name) });
    }
  }
  return { language: "dotnet", chain, frames };
}

// Python -----------------------------------------------------------------------------------------

const PY_CHAIN =
  /^(?:During handling of the above exception, another exception occurred:|The above exception was the direct cause of the following exception:)\s*$/;
const PY_FRAME = /^\s*File "([^"]+)", line \d+, in (.+?)\s*$/;

function pythonPath(path: string): { path: string; lib: boolean } {
  const p = path.replace(/\\/g, "/");
  const lib = /(?:site|dist)-packages\/(.*)$/.exec(p) ?? /\/lib\/python[\d.]+\/(.*)$/.exec(p);
  if (lib) return { path: lib[1], lib: true };
  if (p.startsWith("<")) return { path: p, lib: true }; // <frozen importlib._bootstrap>, <string>
  return { path: p.split("/").filter(Boolean).slice(-2).join("/"), lib: false };
}

function parsePython(ls: string[]): ParsedStack | null {
  const blocks: string[][] = [[]];
  for (const l of ls)
    if (PY_CHAIN.test(l.trim())) blocks.push([]);
    else blocks[blocks.length - 1].push(l);
  const parsed = blocks
    .map((b) => {
      const frames: ParsedFrame[] = [];
      for (const l of b) {
        const m = PY_FRAME.exec(l);
        if (m) {
          const { path, lib } = pythonPath(m[1]);
          frames.push({ name: `${path} in ${m[2]}`, app: !lib });
        }
      }
      // The exception line is the last unindented line; later lines continue a multi-line message.
      const last = b.findLastIndex((l) => /^[A-Za-z_][\w.]*(?::|$)/.test(l) && !l.startsWith("Traceback"));
      const head = last >= 0 ? splitHeader(b.slice(last).join("\n").trim(), true) : null;
      return { frames: frames.reverse(), head };
    })
    .filter((b) => b.frames.length || b.head);
  if (!parsed.length) return null;
  // Python prints the root cause first and the exception as raised last.
  const chain = parsed.map((b) => b.head ?? { exceptionClass: null, message: null }).reverse();
  return { language: "python", chain, frames: parsed[0].frames };
}

// Node -------------------------------------------------------------------------------------------

const NODE_FRAME = /^\s*at\s+(?:async\s+)?(?:(.*?)\s+\((.*)\)|(.*?))(?:\s*\{)?\s*$/; // " {" opens the error's own properties

function parseNodeFrame(line: string): ParsedFrame | "skip" | null {
  const m = NODE_FRAME.exec(line);
  if (!m) return null;
  const fn = m[1] ?? "<anonymous>";
  const loc = (m[2] ?? m[3]).replace(/^file:\/\//, "");
  if (!/:\d+:\d+$/.test(loc)) return /^(?:<anonymous>|native|index \d+)$/.test(loc) ? "skip" : null;
  if (/^node:|^internal\//.test(loc)) return "skip"; // Node's own frames say nothing about the failure
  const file = loc.replace(/:\d+:\d+$/, "").replace(/\\/g, "/");
  const dep = /node_modules\/(.*)$/.exec(file);
  const path = dep ? dep[1] : file.split("/").filter(Boolean).slice(-2).join("/");
  return { name: `${fn} (${path})`, app: !dep };
}

function parseNode(ls: string[]): ParsedStack | null {
  // A section per error: the first line, then one per "[cause]:" (util.inspect) or "Caused by:" (VError).
  const sections: Array<{ header: string[]; frames: ParsedFrame[] }> = [];
  for (const l of ls) {
    const cause = /^\s*(?:\[cause\]:|Caused by:)\s*(.*)$/i.exec(l);
    if (cause || (!sections.length && l.trim())) {
      sections.push({ header: [cause ? cause[1] : l], frames: [] });
      continue;
    }
    const s = sections[sections.length - 1];
    if (!s) continue;
    const frame = parseNodeFrame(l);
    if (frame && frame !== "skip") s.frames.push(frame);
    else if (!frame && !s.frames.length && l.trim()) s.header.push(l); // multi-line messages
  }
  if (!sections.length) return null;
  const chain = sections.map(
    (s) =>
      splitHeader(s.header.join("\n").trim(), true) ?? {
        exceptionClass: null,
        message: s.header.join("\n").trim() || null,
      },
  );
  // The root's own frames, or the nearest enclosing error's when the cause printed none.
  const frames = [...sections].reverse().find((s) => s.frames.length)?.frames ?? [];
  return { language: "node", chain, frames };
}

// Go ---------------------------------------------------------------------------------------------

export function normalizeGoFrame(raw: string): string {
  return raw.replace(/\((?:[^()]|\.\.\.)*\)$/, "").replace(/\.func\d+(?:\.\d+)*/g, ".func<n>");
}

function parseGo(ls: string[]): ParsedStack | null {
  const start = ls.findIndex((l) => /^(?:panic|fatal error): /.test(l));
  if (start < 0) return null;
  const [, kind, rest] = /^(panic|fatal error): (.*)$/.exec(ls[start])!;
  const chain = [{ exceptionClass: kind, message: rest.replace(/\s*\[recovered\]\s*$/, "").trim() || null }];
  const frames: ParsedFrame[] = [];
  let inGoroutine = false;
  for (let i = start + 1; i < ls.length; i++) {
    const l = ls[i];
    if (/^goroutine \d+ \[/.test(l)) {
      if (inGoroutine) break;
      inGoroutine = true;
      continue;
    } // only the panicking goroutine
    if (!inGoroutine || /^\s/.test(l) || !l.trim() || /^created by /.test(l)) continue;
    const name = normalizeGoFrame(l.trim());
    if (/^(?:runtime|runtime\/debug)\.|^panic$/.test(name)) continue; // the panic machinery itself
    // Standard library packages have no dot in their first path segment ("net/http", "encoding/json").
    const pkg = name.slice(0, name.indexOf(".", name.lastIndexOf("/") + 1));
    frames.push({ name, app: pkg === "main" || pkg.split("/")[0].includes(".") });
  }
  return { language: "go", chain, frames };
}

// --- public API ----------------------------------------------------------------------------------

/**
 * Parses a stack trace into its exception chain and the root cause's frames, or null when no
 * known shape is found. Tries the shapes whose markers are unambiguous first.
 */
export function parseStack(stackTrace: string | null): ParsedStack | null {
  if (!stackTrace?.trim()) return null;
  // The last parse is remembered: index rows ask for the chain (groupKeyOf) and then for the root
  // cause (rootCauseOf) of the same stack. Results are treated as read-only by every caller.
  if (stackTrace === lastParse.input) return lastParse.result;
  const result = parseWithKnownFrames(stackTrace) ?? parseStackUncached(stackTrace);
  lastParse = { input: stackTrace, result };
  return result;
}

let lastParse: { input: string | null; result: ParsedStack | null } = { input: null, result: null };

/**
 * A Java stack's first line is its exception and message ("com.foo.X: order 123 failed"), which
 * differ from letter to letter; the lines after it (frames, causes) repeat, and parsing them again
 * for every letter cost a scan about a twentieth of its Node time. So the part after the first
 * line is parsed once and kept (bounded): a stack whose rest is known takes that parse, with its
 * outermost exception read from its own first line, exactly as parseJava reads it. Only where that
 * is the whole difference: the rest begins with a frame (so the first line alone is the outermost
 * header), and neither part holds what would send the text to another parser (Python's or Go's
 * markers) or make the first line something else than a header (blank, "Caused by:", a CR).
 */
const KNOWN_REST_MAX = 256;
const REST_CHARS_MAX = 16_000;
/** Rest of a stack → the parse of a stack with that rest (null: not one this shortcut serves). */
const knownRests = new Map<string, ParsedStack | null>();
const OTHER_PARSER = ["Traceback (most recent call last):", 'File "', "panic: ", "fatal error: "];
const CAUSE_LINE = /^(?:Caused by:|\s*\[cause\]:)\s*(.*)$/;
/** A line (no line break in it) as parseStackUncached reads it: without private-use characters, capped. */
const lineAsRead = (line: string) => stackText(line).slice(0, 2000);

function parseWithKnownFrames(stackTrace: string): ParsedStack | null {
  const nl = stackTrace.indexOf("\n");
  if (nl <= 0 || stackTrace.length > MAX_STACK || stackTrace.length - nl > REST_CHARS_MAX) return null;
  const head = stackTrace.slice(0, nl);
  if (head.includes("\r")) return null;
  const line = lineAsRead(head);
  if (!line.trim() || CAUSE_LINE.test(line) || OTHER_PARSER.some((m) => line.includes(m))) return null;
  const rest = stackTrace.slice(nl);
  let known = knownRests.get(rest);
  if (known === undefined) {
    known = null;
    const end = rest.indexOf("\n", 1);
    const next = lineAsRead((end < 0 ? rest.slice(1) : rest.slice(1, end)).replace(/\r$/, ""));
    if (JAVA_FRAME.test(next) && !OTHER_PARSER.some((m) => stackText(rest).includes(m))) {
      const parsed = parseStackUncached(stackTrace);
      if (parsed?.language === "java") known = parsed;
    }
    if (knownRests.size >= KNOWN_REST_MAX) knownRests.clear();
    knownRests.set(rest, known);
    return known; // this very stack's parse (or null: parse it in full)
  }
  if (!known) return null;
  // parseJava's header of the first section: the first line, without a thread prefix.
  const header = line.replace(/^Exception in thread "[^"]*"\s+/, "");
  const outer = splitHeader(header, true) ?? { exceptionClass: null, message: header.trim() || null };
  return { language: "java", chain: [outer, ...known.chain.slice(1)], frames: known.frames };
}

/** For tests: the parse without any memo (what parseStack must always answer). */
export function parseStackInFull(stackTrace: string): ParsedStack | null {
  return parseStackUncached(stackTrace);
}

function parseStackUncached(stackTrace: string): ParsedStack | null {
  const text = stackText(stackTrace);
  const ls = linesOf(text);
  // A shape's line test runs only when the text holds what that line cannot match without: most
  // stacks are Java's, and testing every line for Python and Go first cost a scan ~1 µs a letter.
  if (
    (text.includes("Traceback (most recent call last):") || text.includes('File "')) &&
    ls.some((l) => /^Traceback \(most recent call last\):/.test(l.trim()) || PY_FRAME.test(l))
  )
    return parsePython(ls);
  if (
    (text.includes("panic: ") || text.includes("fatal error: ")) &&
    ls.some((l) => /^(?:panic|fatal error): /.test(l))
  )
    return parseGo(ls);
  if (ls.some((l) => JAVA_FRAME.test(l))) return parseJava(ls);
  if (
    ls.some((l) => {
      const f = parseNodeFrame(l);
      return f !== null;
    })
  )
    return parseNode(ls);
  if (ls.some((l) => DOTNET_FRAME.test(l))) return parseDotnet(ls);
  return null;
}

/**
 * The root cause's first application frame (the innermost such frame for Python), falling back to
 * its first frame when every frame is runtime or library code. The root cause, not the outermost
 * wrapper: a Spring ListenerExecutionFailedException's own frames are the same for every failure.
 */
export function topStackFrame(stackTrace: string): string | null {
  return topFrameOf(parseStack(stackTrace));
}

/** topStackFrame of an already parsed stack (grouping parses each stack once). */
export function topFrameOf(parsed: ParsedStack | null): string | null {
  const frames = parsed?.frames ?? [];
  return (frames.find((f) => f.app) ?? frames[0])?.name ?? null;
}

/** The exception as thrown (outermost), from a stack trace, or from a bare "Class: message" line. */
export function exceptionClassFromStack(stackTrace: string): string | null {
  const parsed = parseStack(stackTrace);
  if (parsed) return parsed.chain[0]?.exceptionClass ?? null;
  const first = lines(stackTrace).find((l) => l.trim());
  if (!first) return null;
  const go = /^(panic|fatal error): /.exec(first);
  if (go) return go[1];
  return (
    splitHeader(
      first.replace(/^\s*(?:Unhandled exception\.\s*|Exception in thread "[^"]*"\s+)/, "").split(/\s*--->\s*/)[0],
    )?.exceptionClass ?? null
  );
}

/** The innermost exception of the chain (Java "Caused by:", .NET "--->", Python chained tracebacks). */
export function rootCauseOf(
  stackTrace: string | null,
): { exceptionClass: string | null; message: string | null; depth: number } | null {
  const parsed = parseStack(stackTrace);
  const root = parsed?.chain[parsed.chain.length - 1];
  return root ? { ...root, depth: parsed!.chain.length } : null;
}
