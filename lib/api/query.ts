import { AppError } from "@/lib/errors";
import type { z } from "zod";

/** Parses a request's query string with an operation's schema; bad input is `bad_request:query` with the reasons. */
export function parseQuery<S extends z.ZodObject>(schema: S, req: Request): z.output<S> {
  const params = new URL(req.url).searchParams;
  const raw: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const v = params.get(key);
    if (v !== null) raw[key] = v;
  }
  const r = schema.safeParse(raw);
  if (!r.success) {
    throw new AppError("bad_request:query", {
      userMessage: `The query is not valid: ${r.error.issues.map((i) => `${i.path.join(".") || "query"}: ${i.message}`).join("; ")}`,
    });
  }
  return r.data;
}
