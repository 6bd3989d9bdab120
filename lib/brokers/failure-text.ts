/**
 * Failure words adapters read from a letter whatever the broker: the exception class a stack trace
 * names (RabbitMQ headers, SQS message attributes).
 */

/** "com.foo.BarException: message" → "com.foo.BarException"; also "Caused by: …" lines and bare class names. */
export function exceptionClassFromStack(stack: string | null): string | null {
  if (!stack) return null;
  const first = stack.split(/\r?\n/).find((l) => l.trim() !== "");
  if (!first) return null;
  const m =
    /^\s*(?:Caused by:\s*|Exception in thread "[^"]*"\s+)?([A-Za-z_$][\w$]*(?:[.$][A-Za-z_$][\w$]*)*)(?::|\s*$)/.exec(
      first,
    );
  if (!m) return null;
  const cls = m[1];
  // A bare word ("Error", "Timeout") is a class only if it looks like one.
  return cls.includes(".") || /(Exception|Error|Throwable|Fault)$/.test(cls) ? cls : null;
}
