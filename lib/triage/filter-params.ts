import "server-only";
import { AppError } from "@/lib/errors";
import type { LetterFilter } from "./queries";

/** A view's letter filter as its URL carries it, one meaning for the pages, their routes and the API. */

function date(v: string | null, name: string): Date | undefined {
  if (!v) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime()))
    throw new AppError("bad_request:filter", { userMessage: `${name} must be a date and time (ISO 8601).` });
  return d;
}

/**
 * The filter in a URL (so a view can be shared): connectionId, queue, group, class, reason, origin,
 * from, to (ISO 8601), header=name:value, q (text), gone=1.
 */
export function parseLetterFilter(p: URLSearchParams): LetterFilter {
  const connectionId = p.get("connectionId") ?? "";
  const queue = p.get("queue") ?? "";
  if (!connectionId || !queue)
    throw new AppError("bad_request:dlq", { userMessage: "Name the connection and the DLQ (connectionId, queue)." });
  const header = p.get("header");
  let h: LetterFilter["header"];
  if (header) {
    const i = header.indexOf(":");
    if (i <= 0) throw new AppError("bad_request:filter", { userMessage: 'header must look like "name:value".' });
    h = { name: header.slice(0, i), value: header.slice(i + 1) };
  }
  return {
    connectionId,
    queue,
    groupKey: p.get("group") || undefined,
    exceptionClass: p.get("class") || undefined,
    reason: p.get("reason") || undefined,
    origin: p.get("origin") || undefined,
    from: date(p.get("from"), "from"),
    to: date(p.get("to"), "to"),
    header: h,
    text: p.get("q") || undefined,
    includeGone: p.get("gone") === "1",
  };
}
