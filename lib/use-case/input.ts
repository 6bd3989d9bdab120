import type { z } from "zod";
import { AppError } from "@/lib/errors";

/**
 * Validates a use case's input, in one wording for every surface: each problem as "path: message"
 * (the message alone at the top level), joined by "; ". The values themselves are never echoed,
 * so a refused input cannot carry a secret into an error. `code` names the surface
 * (`bad_request:redrive`); the full zod error is kept for the log.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, code: `bad_request:${string}`): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw new AppError(code, {
    message: r.error.message,
    userMessage: r.error.issues.map((i) => `${i.path.length ? `${i.path.join(".")}: ` : ""}${i.message}`).join("; "),
  });
}
