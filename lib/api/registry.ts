import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import type { z } from "zod";
import { problemSchema, PROBLEM_CONTENT_TYPE } from "./problem";

export const API_V1_BASE = "/api/v1";

/**
 * What a v1 route declares about itself. The same `query` schema parses the request and the same
 * `response` schema shapes the answer (lib/api/v1/*.ts), and both are what the document says.
 */
export interface ApiOperation<
  Q extends z.ZodObject | undefined = z.ZodObject | undefined,
  R extends z.ZodType = z.ZodType,
  P extends z.ZodObject | undefined = z.ZodObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** OpenAPI path under the base, e.g. "/dlqs" or "/jobs/{id}". */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Groups operations in the document and the reference page: "DLQs", "Triage", "Redrive", … */
  tag: string;
  /** Problem statuses the operation answers besides 401, 429 and 500. */
  problems?: number[];
  /** Path parameters ({id} in `path`), parsed by parseParams. */
  params?: P;
  query?: Q;
  /** A JSON request body, parsed by parseBody. */
  body?: B;
  /** The success status (200 unless given: 202 for a started job). */
  status?: number;
  /** Other success statuses with the same answer, and when they are given (200: the job was already running). */
  otherSuccess?: Array<{ status: number; description: string }>;
  response: R;
  /** Other media types of the success answer besides JSON (an export as CSV or NDJSON): schema per type. */
  alsoAs?: Record<string, z.ZodType>;
  /** No token needed (the document itself). */
  public?: boolean;
}

const operations: ApiOperation[] = [];

/** Registers an operation for the document; returns it for the route to use (lib/api/route.ts operationRoute). */
export function defineOperation<
  Q extends z.ZodObject | undefined = undefined,
  R extends z.ZodType = z.ZodType,
  P extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(op: ApiOperation<Q, R, P, B>): ApiOperation<Q, R, P, B> {
  if (operations.some((o) => o.method === op.method && o.path === op.path)) return op;
  operations.push(op as unknown as ApiOperation);
  return op;
}

export function registeredOperations(): readonly ApiOperation[] {
  return operations;
}

const PROBLEM_TEXT: Record<number, string> = {
  400: "The request is not valid.",
  401: "No token, or the token is not valid, expired or revoked.",
  403: "The token's role may not do this (the refusal is audited).",
  404: "Not found.",
  409: "Conflict with the current state.",
  429: "Over the token's rate limit; Retry-After says when to retry.",
  500: "Server error; the detail names no internals.",
  503: "A broker or the database is unavailable.",
};

/** The OpenAPI 3.1 document of every registered operation. Holds no secrets: schemas and texts only. */
export function openApiDocument(info: { version: string }) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "A personal API token (dlqc_…), created on the profile page.",
  });
  for (const op of operations) {
    const problems = [...new Set([...(op.public ? [] : [401, 429]), ...(op.problems ?? []), 500])].sort();
    registry.registerPath({
      method: op.method,
      path: `${API_V1_BASE}${op.path}`,
      operationId: op.operationId,
      summary: op.summary,
      description: op.description,
      security: op.public ? [] : [{ bearer: [] }],
      tags: [op.tag],
      request: {
        ...(op.params ? { params: op.params } : {}),
        ...(op.query ? { query: op.query } : {}),
        ...(op.body ? { body: { required: true, content: { "application/json": { schema: op.body } } } } : {}),
      },
      responses: {
        [op.status ?? 200]: {
          description: op.status === 202 ? "Accepted: the job runs in the background; poll it." : "OK",
          content: {
            "application/json": { schema: op.response },
            ...Object.fromEntries(Object.entries(op.alsoAs ?? {}).map(([type, schema]) => [type, { schema }])),
          },
        },
        ...Object.fromEntries(
          (op.otherSuccess ?? []).map((o) => [
            o.status,
            { description: o.description, content: { "application/json": { schema: op.response } } },
          ]),
        ),
        ...Object.fromEntries(
          problems.map((s) => [
            s,
            {
              description: PROBLEM_TEXT[s] ?? "Problem",
              content: { [PROBLEM_CONTENT_TYPE]: { schema: problemSchema } },
              ...(s === 429
                ? {
                    headers: {
                      "Retry-After": { description: "Seconds to wait.", schema: { type: "integer" as const } },
                    },
                  }
                : {}),
            },
          ]),
        ),
      },
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "DLQ Console API",
      version: info.version,
      description: "Versioned API of the DLQ Console. Errors are problem details (RFC 9457).",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
  });
}
