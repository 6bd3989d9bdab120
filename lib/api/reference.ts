/**
 * The API reference page's view of the OpenAPI document (lib/api/registry.ts openApiDocument): per
 * tag its operations, each with parameters, body and responses as field trees with every $ref
 * resolved, and a curl line. Pure: it reads only the document it is given, so the page shows what
 * /api/v1/openapi.json serves and cannot drift from it.
 */

/** The parts of an OpenAPI 3.1 document this reads; anything else is ignored. */
export interface OpenApiDoc {
  info: { title: string; version: string; description?: string };
  security?: Array<Record<string, string[]>>;
  components?: {
    schemas?: Record<string, JsonSchema>;
    parameters?: Record<string, ParameterObject>;
    securitySchemes?: Record<string, { type: string; scheme?: string; description?: string }>;
  };
  paths: Record<string, Partial<Record<string, OperationObject>>>;
}

type JsonSchema = { [key: string]: unknown };
interface ParameterObject {
  $ref?: string;
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}
interface MediaObject {
  schema?: JsonSchema;
}
interface OperationObject {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: ParameterObject[];
  requestBody?: { required?: boolean; content?: Record<string, MediaObject> };
  responses?: Record<
    string,
    {
      description?: string;
      content?: Record<string, MediaObject>;
      headers?: Record<string, { description?: string; schema?: JsonSchema }>;
    }
  >;
}

/** One field of a schema, as the page shows it: what it is called, what it holds, what it means. */
export interface FieldNode {
  /** Property name; null for the schema's root; "[key]" for the values of a map. */
  name: string | null;
  /** "string", "integer", "object", "AuditRow", "AuditRow[]", "one of", ... */
  type: string;
  /** The named component this field is (after resolving its $ref), if any. */
  ref: string | null;
  required: boolean;
  nullable: boolean;
  description: string | null;
  format: string | null;
  enumValues: string[] | null;
  defaultValue: string | null;
  /** Limits worth knowing when writing a request: "1–200 chars", "≥ 1", "pattern ^a". */
  constraints: string[];
  children: FieldNode[];
  /** The component appears inside itself: shown by name, not expanded again. */
  circular: boolean;
}

export interface ParameterView {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  type: string;
  required: boolean;
  description: string | null;
  enumValues: string[] | null;
  defaultValue: string | null;
  constraints: string[];
}

export interface ContentView {
  mediaType: string;
  schema: FieldNode | null;
}

export interface ResponseView {
  status: string;
  description: string;
  /** A problem-details answer (application/problem+json): the page points to the one Problem shape. */
  problem: boolean;
  content: ContentView[];
  headers: Array<{ name: string; description: string | null; type: string }>;
}

export interface OperationView {
  operationId: string;
  method: string;
  path: string;
  tag: string;
  summary: string;
  description: string | null;
  /** No token needed. */
  public: boolean;
  parameters: ParameterView[];
  requestBody: { required: boolean; content: ContentView[] } | null;
  responses: ResponseView[];
  curl: string;
}

export interface ReferenceView {
  title: string;
  version: string;
  description: string | null;
  auth: Array<{ name: string; type: string; scheme: string | null; description: string | null }>;
  problem: FieldNode | null;
  tags: Array<{ name: string; operations: OperationView[] }>;
}

export const PROBLEM_MEDIA_TYPE = "application/problem+json";
/** Stand-ins in the curl lines: the reader's own token and console address, never real values. */
export const TOKEN_PLACEHOLDER = "$DLQ_CONSOLE_TOKEN";
export const BASE_PLACEHOLDER = "$DLQ_CONSOLE_URL";

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
/** Deep enough for every shape the API has; stops a malformed document from recursing forever. */
const MAX_DEPTH = 12;

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1);

function constraintsOf(s: JsonSchema): string[] {
  const out: string[] = [];
  const n = (k: string) => (typeof s[k] === "number" ? (s[k] as number) : null);
  const minL = n("minLength");
  const maxL = n("maxLength");
  if (minL !== null && maxL !== null) out.push(`${minL}–${maxL} chars`);
  else if (maxL !== null) out.push(`≤ ${maxL} chars`);
  else if (minL !== null && minL > 0) out.push(`≥ ${minL} chars`);
  if (n("minimum") !== null) out.push(`≥ ${n("minimum")}`);
  if (n("exclusiveMinimum") !== null) out.push(`> ${n("exclusiveMinimum")}`);
  if (n("maximum") !== null) out.push(`≤ ${n("maximum")}`);
  if (n("exclusiveMaximum") !== null) out.push(`< ${n("exclusiveMaximum")}`);
  if (n("minItems") !== null && (n("minItems") as number) > 0) out.push(`≥ ${n("minItems")} items`);
  if (n("maxItems") !== null) out.push(`≤ ${n("maxItems")} items`);
  if (str(s.pattern)) out.push(`pattern ${s.pattern as string}`);
  return out;
}

/**
 * A schema as a field tree: $refs resolved from the document's components (a component inside
 * itself is named, not expanded), `["string", "null"]` and `anyOf [X, null]` read as a nullable X,
 * arrays as "X[]" with X's fields, maps as a "[key]" child.
 */
export function fieldTree(
  doc: OpenApiDoc,
  schema: JsonSchema | undefined,
  name: string | null = null,
  required = false,
  seen: readonly string[] = [],
  depth = 0,
): FieldNode {
  const node: FieldNode = {
    name,
    type: "any",
    ref: null,
    required,
    nullable: false,
    description: null,
    format: null,
    enumValues: null,
    defaultValue: null,
    constraints: [],
    children: [],
    circular: false,
  };
  if (!schema || typeof schema !== "object") return node;
  node.description = str(schema.description);

  if (typeof schema.$ref === "string") {
    const ref = refName(schema.$ref);
    if (seen.includes(ref) || depth >= MAX_DEPTH) return { ...node, type: ref, ref, circular: true };
    const target = doc.components?.schemas?.[ref];
    const inner = fieldTree(doc, target, name, required, [...seen, ref], depth + 1);
    // The description at the place of use says more about this field than the component's own.
    return {
      ...inner,
      ref,
      type: inner.type === "object" || inner.type === "any" ? ref : inner.type,
      description: node.description ?? inner.description,
    };
  }

  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(variants)) {
    const nonNull = variants.filter((v) => v?.type !== "null");
    const nullable = nonNull.length < variants.length;
    if (nonNull.length === 1) {
      const inner = fieldTree(doc, nonNull[0], name, required, seen, depth + 1);
      return { ...inner, nullable: inner.nullable || nullable, description: node.description ?? inner.description };
    }
    const disc = (schema.discriminator as { propertyName?: string } | undefined)?.propertyName;
    return {
      ...node,
      type: "one of",
      nullable,
      description: node.description ?? (disc ? `Told apart by \`${disc}\`.` : null),
      children: nonNull.map((v, i) => {
        const child = fieldTree(doc, v, null, false, seen, depth + 1);
        // A variant is best named by the field that tells it apart (kind: "filter").
        const tagField = child.children.find((c) => c.enumValues?.length === 1 && (disc ? c.name === disc : true));
        return {
          ...child,
          name: tagField ? `${tagField.name} = "${tagField.enumValues![0]}"` : (child.ref ?? `variant ${i + 1}`),
        };
      }),
    };
  }

  if (Array.isArray(schema.allOf)) {
    const parts = (schema.allOf as JsonSchema[]).map((p) => fieldTree(doc, p, name, required, seen, depth + 1));
    return { ...node, type: "object", children: parts.flatMap((p) => p.children) };
  }

  let type = schema.type;
  if (Array.isArray(type)) {
    node.nullable = type.includes("null");
    const rest = type.filter((t) => t !== "null");
    type = rest.length === 1 ? rest[0] : rest.join(" | ");
  }
  node.type = typeof type === "string" ? type : schema.properties ? "object" : schema.enum ? "string" : "any";
  node.format = str(schema.format);
  if (Array.isArray(schema.enum)) node.enumValues = (schema.enum as unknown[]).filter((v) => v !== null).map(String);
  if (schema.const !== undefined) node.enumValues = [String(schema.const)];
  if (schema.default !== undefined) node.defaultValue = JSON.stringify(schema.default);
  node.constraints = constraintsOf(schema);

  if (node.type === "array") {
    const item = fieldTree(doc, schema.items as JsonSchema | undefined, null, false, seen, depth + 1);
    return {
      ...node,
      type: `${item.type}${item.nullable ? " | null" : ""}[]`,
      ref: item.ref,
      enumValues: item.enumValues,
      constraints: [...node.constraints, ...item.constraints],
      children: item.children,
      circular: item.circular,
    };
  }

  if (node.type === "object" || schema.properties) {
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const req = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    node.children = Object.entries(props).map(([k, v]) => fieldTree(doc, v, k, req.has(k), seen, depth + 1));
    const extra = schema.additionalProperties;
    if (extra && typeof extra === "object" && Object.keys(extra).length)
      node.children.push(fieldTree(doc, extra as JsonSchema, "[key]", false, seen, depth + 1));
    else if (extra === true || (extra && typeof extra === "object") || (!schema.properties && extra === undefined))
      node.type = "object (any keys)";
  }
  return node;
}

/** A value of the schema's shape for a request example: required fields only, enums' first value. */
export function exampleValue(
  doc: OpenApiDoc,
  schema: JsonSchema | undefined,
  seen: readonly string[] = [],
  depth = 0,
): unknown {
  if (!schema || depth > MAX_DEPTH) return null;
  if (schema.default !== undefined) return schema.default;
  if (typeof schema.$ref === "string") {
    const ref = refName(schema.$ref);
    return seen.includes(ref) ? null : exampleValue(doc, doc.components?.schemas?.[ref], [...seen, ref], depth + 1);
  }
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(variants))
    return exampleValue(
      doc,
      variants.find((v) => v?.type !== "null"),
      seen,
      depth + 1,
    );
  if (Array.isArray(schema.enum)) return schema.enum.find((v) => v !== null) ?? null;
  if (schema.const !== undefined) return schema.const;
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  const t = types.find((x) => x !== "null") ?? (schema.properties ? "object" : undefined);
  switch (t) {
    case "object": {
      const req = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
      return Object.fromEntries(
        req.filter((k) => props[k]).map((k) => [k, exampleValue(doc, props[k], seen, depth + 1)]),
      );
    }
    case "array":
      return [];
    case "integer":
    case "number":
      return typeof schema.minimum === "number"
        ? schema.minimum
        : typeof schema.exclusiveMinimum === "number"
          ? schema.exclusiveMinimum + 1
          : 1;
    case "boolean":
      return false;
    case "string":
      return schema.format === "date-time"
        ? "2026-01-01T00:00:00Z"
        : schema.format === "uuid"
          ? "00000000-0000-0000-0000-000000000000"
          : "…";
    default:
      return null;
  }
}

/** Single-quoted for a POSIX shell. */
const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * A curl line for the operation: the token and the console's address as shell variables the
 * reader sets (the page never holds a token), path parameters as {name} to fill in, required query
 * parameters with an example value, and a body of the required fields.
 */
export function curlFor(
  doc: OpenApiDoc,
  method: string,
  path: string,
  op: OperationObject,
  isPublic: boolean,
  params: ParameterView[],
): string {
  const query = params
    .filter((p) => p.in === "query" && p.required)
    .map(
      (p) =>
        `${encodeURIComponent(p.name)}=${p.enumValues?.[0] ?? p.defaultValue?.replaceAll('"', "") ?? `<${p.name}>`}`,
    );
  const url = `${BASE_PLACEHOLDER}${path}${query.length ? `?${query.join("&")}` : ""}`;
  const lines = [`curl -sS${method === "get" ? "" : ` -X ${method.toUpperCase()}`}`];
  if (!isPublic) lines.push(`-H "Authorization: Bearer ${TOKEN_PLACEHOLDER}"`);
  const json = op.requestBody?.content?.["application/json"];
  if (json) {
    lines.push(`-H "Content-Type: application/json"`);
    lines.push(`-d ${shellQuote(JSON.stringify(exampleValue(doc, json.schema)))}`);
  }
  lines.push(`"${url}"`);
  return lines.join(" \\\n  ");
}

function parameterView(doc: OpenApiDoc, p: ParameterObject): ParameterView {
  const resolved = p.$ref ? (doc.components?.parameters?.[refName(p.$ref)] ?? p) : p;
  const tree = fieldTree(doc, resolved.schema);
  return {
    name: resolved.name,
    in: resolved.in as ParameterView["in"],
    type: tree.format ? `${tree.type} (${tree.format})` : tree.type,
    required: resolved.in === "path" || Boolean(resolved.required),
    description: str(resolved.description) ?? tree.description,
    enumValues: tree.enumValues,
    defaultValue: tree.defaultValue,
    constraints: tree.constraints,
  };
}

function contentViews(doc: OpenApiDoc, content: Record<string, MediaObject> | undefined): ContentView[] {
  return Object.entries(content ?? {}).map(([mediaType, m]) => ({
    mediaType,
    schema: m.schema ? fieldTree(doc, m.schema) : null,
  }));
}

/** The whole page's model: tags in the order their first operation appears, operations in document order. */
export function referenceView(doc: OpenApiDoc): ReferenceView {
  const tags = new Map<string, OperationView[]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const isPublic = Array.isArray(op.security) ? op.security.length === 0 : (doc.security ?? []).length === 0;
      const parameters = (op.parameters ?? []).map((p) => parameterView(doc, p));
      const tag = op.tags?.[0] ?? "Other";
      const view: OperationView = {
        operationId: op.operationId ?? `${method} ${path}`,
        method: method.toUpperCase(),
        path,
        tag,
        summary: op.summary ?? "",
        description: str(op.description),
        public: isPublic,
        parameters,
        requestBody: op.requestBody
          ? { required: Boolean(op.requestBody.required), content: contentViews(doc, op.requestBody.content) }
          : null,
        responses: Object.entries(op.responses ?? {})
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([status, r]) => ({
            status,
            description: r.description ?? "",
            problem: Object.keys(r.content ?? {}).includes(PROBLEM_MEDIA_TYPE),
            content: contentViews(doc, r.content),
            headers: Object.entries(r.headers ?? {}).map(([name, h]) => ({
              name,
              description: str(h.description),
              type: fieldTree(doc, h.schema).type,
            })),
          })),
        curl: curlFor(doc, method, path, op, isPublic, parameters),
      };
      tags.set(tag, [...(tags.get(tag) ?? []), view]);
    }
  }
  const problemSchema = doc.components?.schemas?.Problem;
  return {
    title: doc.info.title,
    version: doc.info.version,
    description: str(doc.info.description),
    auth: Object.entries(doc.components?.securitySchemes ?? {}).map(([name, s]) => ({
      name,
      type: s.type,
      scheme: str(s.scheme),
      description: str(s.description),
    })),
    problem: problemSchema ? { ...fieldTree(doc, { $ref: "#/components/schemas/Problem" }), name: null } : null,
    tags: [...tags].map(([name, operations]) => ({ name, operations })),
  };
}
