import { notFound } from "next/navigation";
import { Problem } from "@/components/ui/problem";
import Link from "@/components/ui/link";
import { asAppError } from "@/lib/errors";
import { triageBase } from "@/lib/triage/view-params";

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
  // The broker answered: the queue is busy, or it refused for now. Never "unreachable".
  if (e.code === "unavailable:queue-busy" || e.code === "unavailable:throttled") {
    return (
      <Problem
        title={
          e.code === "unavailable:queue-busy"
            ? "This queue is being read right now."
            : `${ctx.connectionId} refused this read for now.`
        }
        back={ctx.back}
      >
        <p data-testid="busy-note">{e.userMessage}</p>
        {e.code === "unavailable:queue-busy" ? (
          <p>
            Meanwhile, <Link href={triageBase(ctx.connectionId, ctx.queue)}>the triage view</Link> shows this
            queue&apos;s letters as the console last indexed them, without reading the queue.
          </p>
        ) : null}
      </Problem>
    );
  }
  // The broker refused the console's own credentials: not the operator's role.
  if (e.code === "forbidden:broker") {
    return (
      <Problem title={`${ctx.connectionId} refused the console's credentials.`} back={ctx.back}>
        <p>{e.userMessage} Nothing was read or changed.</p>
      </Problem>
    );
  }
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
