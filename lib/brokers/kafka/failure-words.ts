/**
 * What a Kafka dead letter's error headers say, in an operator's words: the exception that caused
 * the failure (not the framework's wrapper) and why the record was dead-lettered. Pure.
 *
 * Spring Kafka wraps every listener failure in ListenerExecutionFailedException and names the
 * wrapper in `kafka_dlt-exception-fqcn`; the cause is in `kafka_dlt-exception-cause-fqcn` (Spring
 * Kafka 2.8+). Spring writes no header for the cause's message: it is taken from where the other
 * headers carry it (the wrapper's message before Spring 6, "…; nested exception is C: msg", or
 * "…; C: msg"; or the stack trace's "Caused by: C: msg"), else the wrapper's message is kept.
 */

export interface SpringExceptionInput {
  /** `kafka_dlt-exception-fqcn` (or the key exception's), as the last failure wrote it. */
  exceptionClass: string | null;
  causeClass: string | null;
  message: string | null;
  stackTrace: string | null;
}

export interface ResolvedException {
  exceptionClass: string | null;
  exceptionMessage: string | null;
  /** The outer class when `exceptionClass` is its cause (e.g. ListenerExecutionFailedException). */
  wrapperClass: string | null;
}

const blank = (s: string | null | undefined): string | null => (s?.trim() ? s.trim() : null);

/** The text after the last "<cls>: " in `text`, up to the first stack frame line; undefined when absent. */
function messageAfter(text: string | null, cls: string): string | null | undefined {
  if (!text) return undefined;
  const marker = `${cls}:`;
  let i = text.lastIndexOf(marker);
  // "com.acme.X:" must not be the tail of a longer name ("com.acme.XY:" or "a.com.acme.X:").
  while (i > 0 && /[\w$.]/.test(text[i - 1])) i = text.lastIndexOf(marker, i - 1);
  if (i < 0) return undefined;
  const rest = text.slice(i + marker.length);
  const end = rest.search(/\r?\n\s*at\s/);
  return blank(end < 0 ? rest : rest.slice(0, end));
}

/** "Caused by: <cls>: msg" (or a stack trace that starts with "<cls>: msg"). */
function causeLine(stack: string | null, cls: string): string | null | undefined {
  if (!stack) return undefined;
  const lines = stack.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/^\s*Caused by:\s*/, "");
    if (line !== lines[i] || i === 0) {
      if (line === cls) return null;
      if (line.startsWith(`${cls}:`)) {
        const tail = [line.slice(cls.length + 1)];
        // Multi-line messages run until the first frame.
        for (let j = i + 1; j < lines.length && !/^\s*(at\s|\.\.\.\s|Caused by:)/.test(lines[j]); j++)
          tail.push(lines[j]);
        return blank(tail.join("\n"));
      }
    }
  }
  return undefined;
}

/**
 * The cause Spring named, with its message where the headers carry it, and the wrapper beside it.
 * Without a cause header (or one naming the wrapper itself), the headers' exception as it is.
 */
export function springException(h: SpringExceptionInput): ResolvedException {
  const outer = blank(h.exceptionClass);
  const cause = blank(h.causeClass);
  const message = blank(h.message);
  if (!cause || cause === outer) return { exceptionClass: outer, exceptionMessage: message, wrapperClass: null };
  const nested = message?.includes("nested exception is") ? messageAfter(message, cause) : undefined;
  const found = nested !== undefined ? nested : (messageAfter(message, cause) ?? causeLine(h.stackTrace, cause));
  return {
    exceptionClass: cause,
    exceptionMessage: found !== undefined ? found : message,
    wrapperClass: outer,
  };
}

/** The class the console writes when an operator skips a record to the DLT (consumer-group-skip.ts). */
export const OPERATOR_SKIP_FQCN = "dlq-console.OperatorSkip";

/** Why Spring dead-lettered it: a key or value that could not be deserialized, else the listener failed. */
export function springReason(h: { keyException: boolean; exceptionClass: string | null }): string {
  if (h.exceptionClass === OPERATOR_SKIP_FQCN) return "skipped by an operator";
  if (h.keyException) return "key deserialization failed";
  if (h.exceptionClass && /(^|\.)DeserializationException$/.test(h.exceptionClass))
    return "value deserialization failed";
  return "listener failed";
}

/** Kafka Connect's stages (ErrorReporter's Stage enum) as words. */
const CONNECT_STAGES: Record<string, string> = {
  KEY_CONVERTER: "key converter failed",
  VALUE_CONVERTER: "value converter failed",
  HEADER_CONVERTER: "header converter failed",
  TRANSFORMATION: "transformation failed",
  TASK_PUT: "sink task failed to write it",
  TASK_POLL: "source task failed to read it",
  KAFKA_PRODUCE: "producing to Kafka failed",
  KAFKA_CONSUME: "consuming from Kafka failed",
};

/** Why Kafka Connect dead-lettered it, from `__connect.errors.stage`. */
export function connectReason(stage: string | null): string {
  const s = blank(stage);
  if (!s) return "connector failed";
  return CONNECT_STAGES[s] ?? `connector failed at ${s.toLowerCase().replace(/_/g, " ")}`;
}

/** Kafka Streams (KIP-1034) records no stage: its handlers dead-letter records the topology could not process. */
export const STREAMS_REASON = "stream processing failed";

/** One line for the death history: the reason, and the exception's class where there is one. */
export function deathReason(reason: string | null, exceptionClass: string | null): string | null {
  if (!reason) return exceptionClass;
  return exceptionClass ? `${reason}: ${exceptionClass}` : reason;
}
