/**
 * Test support for /api/v1 (integration tests on real Postgres and the configured brokers): real
 * users with real tokens made by lib/api-tokens, route handlers called with a Request as Next calls
 * them, and answers checked against the served OpenAPI document with validators from npm.
 */
import { randomUUID } from "node:crypto";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { expect } from "vitest";
import { createToken } from "@/lib/api-tokens";
import type { Actor } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { getDb } from "@/lib/db";
import { GET as openapiGET } from "@/app/api/v1/openapi.json/route";

export const V1_ORIGIN = "http://127.0.0.1:3999";
export type V1Role = "viewer" | "operator" | "admin";
export type V1Handler = (req: Request, ctx: { params: Promise<any> }) => Promise<Response>;
export interface V1User {
  actor: Actor;
  token: string;
  tokenId: string;
}

/** A user and a token of each role asked for, named after `label` (unique per call). */
export async function v1Users<R extends V1Role>(label: string, roles: readonly R[]): Promise<Record<R, V1User>> {
  const tag = randomUUID().slice(0, 8);
  const out = {} as Record<R, V1User>;
  for (const role of roles) {
    const u = await createUser({
      email: `${role}-${tag}@${label}.test`,
      role,
      password: `${role}-${label}-password-1`,
    });
    const actor: Actor = { id: u.id, email: u.email, name: null, role };
    const { token, view } = await createToken(
      actor,
      { requestId: `setup-${randomUUID()}`, ip: null },
      { name: `${label} ${role}`, role, expiresInDays: 7 },
    );
    out[role] = { actor, token, tokenId: view.id };
  }
  return out;
}

export interface V1Call {
  token?: string;
  cookie?: string;
  authorization?: string;
  method?: string;
  /** Sent as JSON (Content-Type: application/json). */
  json?: unknown;
  params?: Record<string, string | string[]>;
}

/** Calls a route handler as Next does; `body` is the parsed JSON answer ({} when it is not JSON). */
export async function callV1(handler: V1Handler, url: string, opts: V1Call = {}) {
  const requestId = `v1-${randomUUID()}`;
  const headers = new Headers({ "x-request-id": requestId, "x-forwarded-for": "127.0.0.1" });
  if (opts.token) headers.set("authorization", `Bearer ${opts.token}`);
  if (opts.authorization) headers.set("authorization", opts.authorization);
  if (opts.cookie) headers.set("cookie", opts.cookie);
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(opts.json);
  }
  const method = opts.method ?? (opts.json !== undefined ? "POST" : "GET");
  const res = await handler(new Request(`${V1_ORIGIN}${url}`, { method, headers, body }), {
    params: Promise.resolve(opts.params ?? {}),
  });
  const text = await res.text();
  let json: Record<string, any> = {};
  try {
    json = JSON.parse(text) as Record<string, any>;
  } catch {
    /* not JSON: an export */
  }
  return { res, status: res.status, requestId, text, body: json };
}

let doc: Record<string, any> | undefined;
/** The served document (GET /api/v1/openapi.json), read once per test file. */
export async function v1Document(): Promise<Record<string, any>> {
  doc ??= (await callV1(openapiGET as V1Handler, "/api/v1/openapi.json")).body;
  return doc;
}

/**
 * Validates a real answer against the schema the document gives for it (JSON Schema 2020-12, as
 * OpenAPI 3.1 uses): `pathKey` as in the document ("/api/v1/scans/{id}"), the answer's status and
 * content type. Fails when the operation, status or media type is not documented.
 */
export async function expectDocumented(method: string, pathKey: string, res: Response, body: unknown) {
  const d = await v1Document();
  const contentType = (res.headers.get("content-type") ?? "").split(";")[0];
  const schema =
    d.paths[pathKey]?.[method.toLowerCase()]?.responses?.[String(res.status)]?.content?.[contentType]?.schema;
  expect(schema, `${method} ${pathKey} ${res.status} ${contentType} is documented`).toBeDefined();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile({ ...schema, components: d.components });
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
}

/** The audit rows a request left, oldest first. */
export function auditRowsOf(requestId: string) {
  return getDb().auditEvent.findMany({ where: { requestId }, orderBy: { id: "asc" } });
}
