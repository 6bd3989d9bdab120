import { AppError } from "@/lib/errors";
import { readCapped } from "@/lib/http/read-capped";
import type { z } from "zod";

/** A v1 request body is small JSON: a plan, a selection, a reason. Anything larger is refused unread. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Reads and parses a request's JSON body with an operation's schema. A body that is not JSON, too
 * large, or fails the schema is `bad_request:body` with the reasons (field paths and messages, never
 * the values sent).
 */
export async function parseBody<S extends z.ZodType>(schema: S, req: Request): Promise<z.output<S>> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json")
    throw new AppError("bad_request:body", {
      userMessage: "Send the body as JSON with `Content-Type: application/json`.",
    });
  const text = await readCapped(req, MAX_BODY_BYTES);
  if (text === null) throw tooLarge();
  let raw: unknown;
  try {
    raw = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    throw new AppError("bad_request:body", { userMessage: "The body is not valid JSON." });
  }
  const r = schema.safeParse(raw);
  if (!r.success) {
    throw new AppError("bad_request:body", {
      userMessage: `The body is not valid: ${r.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")}`,
    });
  }
  return r.data;
}

/** Parses a route's path parameters with an operation's schema (`not_found:path` when they cannot name anything). */
export function parseParams<S extends z.ZodObject>(schema: S, params: unknown): z.output<S> {
  const r = schema.safeParse(params);
  if (!r.success) throw new AppError("not_found:path", { userMessage: "Nothing is at this path." });
  return r.data;
}

function tooLarge(): AppError {
  return new AppError("bad_request:body", { userMessage: `The body is larger than ${MAX_BODY_BYTES / 1024} KiB.` });
}
