import { notFound } from "next/navigation";
import { Problem } from "@/components/ui/problem";
import { asAppError } from "@/lib/errors";

/**
 * Known failures of reading a DLQ, explained; returns null for anything else so the caller can
 * rethrow to the error boundary. A connection, queue or letter that does not exist is a 404 (the
 * not-found page names it); a broker that does not answer is not: it says so, and nothing is
 * claimed about what exists.
 */
export function dlqProblem(
  err: unknown,
  ctx: { connectionId: string; queue: string; back: { href: string; label: string } },
) {
  const e = asAppError(err);
  if (!e) return null;
  const [type] = e.code.split(":");
  if (type === "not_found") notFound();
  if (type === "unavailable") {
    return (
      <Problem title={`${ctx.connectionId} is unreachable right now.`} back={ctx.back}>
        <p>
          {e.userMessage} Nothing was read or changed. Reload this page when the broker is back; the console keeps
          retrying.
        </p>
      </Problem>
    );
  }
  if (type === "forbidden") {
    return (
      <Problem title="Your role does not allow this." back={ctx.back}>
        <p>{e.userMessage}</p>
      </Problem>
    );
  }
  if (type === "bad_request" || type === "confirmation_required" || type === "conflict") {
    return (
      <Problem title="This page cannot be shown." back={ctx.back}>
        <p>{e.userMessage}</p>
      </Problem>
    );
  }
  return null;
}
