import { Problem } from "@/components/ui/problem";
import { asAppError } from "@/lib/use-case/app-error";

/**
 * Known failures of reading a DLQ, explained; returns null for anything else so the caller can
 * rethrow to the error boundary.
 */
export function dlqProblem(
  err: unknown,
  ctx: { connectionId: string; queue: string; back: { href: string; label: string } },
) {
  const e = asAppError(err);
  if (!e) return null;
  const [type, surface] = e.code.split(":");
  if (type === "not_found" && surface === "connection") {
    return (
      <Problem title={`There is no connection "${ctx.connectionId}".`} back={ctx.back}>
        <p>The link may be from another console, or the connection was removed from the config file.</p>
      </Problem>
    );
  }
  if (type === "not_found") {
    return (
      <Problem title={`The queue "${ctx.queue}" does not exist on ${ctx.connectionId}.`} back={ctx.back}>
        <p>
          It may have been deleted, or renamed. If it is named in the config file, fix or remove the entry there.{" "}
          {e.userMessage}
        </p>
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
