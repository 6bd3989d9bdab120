import { describe, expect, it } from "vitest";
import { openApiDocument } from "@/lib/api/registry";
import "@/lib/api/v1";
import {
  curlFor,
  exampleValue,
  fieldTree,
  referenceView,
  TOKEN_PLACEHOLDER,
  type FieldNode,
  type OpenApiDoc,
} from "./reference";

/** The API reference page's model, from a small hand-written document and from the real one. */
const doc: OpenApiDoc = {
  info: { title: "T", version: "1" },
  security: [{ bearer: [] }],
  components: {
    securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A token." } },
    schemas: {
      Problem: {
        type: "object",
        properties: { status: { type: "integer" }, detail: { type: "string" } },
        required: ["status", "detail"],
      },
      Node: {
        type: "object",
        properties: {
          id: { type: "string", format: "uuid" },
          next: { anyOf: [{ $ref: "#/components/schemas/Node" }, { type: "null" }] },
        },
        required: ["id"],
      },
      Start: {
        type: "object",
        properties: {
          queue: { type: "string", minLength: 1, maxLength: 200, description: "The DLQ." },
          mode: { type: "string", enum: ["sample", "bulk"] },
          rate: { type: "integer", minimum: 1, default: 50 },
          note: { type: ["string", "null"] },
        },
        required: ["queue", "mode"],
      },
    },
  },
  paths: {
    "/api/v1/things/{id}": {
      get: {
        operationId: "getThing",
        summary: "One thing",
        tags: ["Things"],
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string" } },
          { name: "view", in: "query", required: true, schema: { type: "string", enum: ["full", "short"] } },
          {
            name: "limit",
            in: "query",
            required: false,
            description: "Rows per page.",
            schema: { type: "integer", minimum: 1, maximum: 500, default: 100 },
          },
        ],
        responses: {
          "404": {
            description: "Not found.",
            content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
          },
          "200": {
            description: "OK",
            content: {
              "application/json": { schema: { type: "array", items: { $ref: "#/components/schemas/Node" } } },
              "text/csv": { schema: { type: "string", description: "CSV." } },
            },
          },
        },
      },
    },
    "/api/v1/starts": {
      post: {
        operationId: "start",
        summary: "Start",
        tags: ["Starts"],
        requestBody: {
          required: true,
          content: { "application/json": { schema: { $ref: "#/components/schemas/Start" } } },
        },
        responses: { "202": { description: "Accepted" } },
      },
    },
    "/api/v1/doc": {
      get: {
        operationId: "doc",
        summary: "Document",
        tags: ["Document"],
        security: [],
        responses: { "200": { description: "OK" } },
      },
    },
  },
};

const find = (n: FieldNode, name: string) => n.children.find((c) => c.name === name);

describe("fieldTree", () => {
  it("resolves $refs, reads anyOf [X, null] and type [X, null] as nullable X, and names a component inside itself instead of expanding it", () => {
    const tree = fieldTree(doc, { type: "array", items: { $ref: "#/components/schemas/Node" } });
    expect(tree.type).toBe("Node[]");
    expect(find(tree, "id")).toMatchObject({ type: "string", format: "uuid", required: true, nullable: false });
    expect(find(tree, "next")).toMatchObject({
      type: "Node",
      ref: "Node",
      nullable: true,
      required: false,
      circular: true,
      children: [],
    });
    const start = fieldTree(doc, { $ref: "#/components/schemas/Start" });
    expect(find(start, "queue")).toMatchObject({
      description: "The DLQ.",
      constraints: ["1–200 chars"],
      required: true,
    });
    expect(find(start, "mode")?.enumValues).toEqual(["sample", "bulk"]);
    expect(find(start, "rate")).toMatchObject({ defaultValue: "50", constraints: ["≥ 1"] });
    expect(find(start, "note")).toMatchObject({ type: "string", nullable: true });
  });

  it("shows a map's values as a [key] child and an object of any keys as such", () => {
    expect(fieldTree(doc, { type: "object", additionalProperties: { type: "integer" } }).children).toEqual([
      expect.objectContaining({ name: "[key]", type: "integer" }),
    ]);
    expect(fieldTree(doc, { type: "object", additionalProperties: {} }).type).toBe("object (any keys)");
  });
});

describe("curl lines", () => {
  it("use a token placeholder, fill required query parameters, leave path parameters to fill, and send a body of the required fields", () => {
    const view = referenceView(doc);
    const get = view.tags[0].operations[0];
    expect(get.curl).toContain(`Authorization: Bearer ${TOKEN_PLACEHOLDER}`);
    expect(get.curl).toContain('"$DLQ_CONSOLE_URL/api/v1/things/{id}?view=full"');
    expect(get.curl).not.toContain("-X");
    const post = view.tags[1].operations[0];
    expect(post.curl).toContain("-X POST");
    expect(post.curl).toContain(`-d '{"queue":"…","mode":"sample"}'`);
    expect(view.tags[2].operations[0].curl).not.toContain("Authorization");
  });

  it("quote a body for the shell", () => {
    const d: OpenApiDoc = { info: { title: "", version: "" }, paths: {} };
    expect(
      curlFor(
        d,
        "post",
        "/x",
        {
          requestBody: {
            content: {
              "application/json": { schema: { type: "object", properties: { a: { const: "it's" } }, required: ["a"] } },
            },
          },
        },
        true,
        [],
      ),
    ).toContain(`-d '{"a":"it'\\''s"}'`);
    expect(exampleValue(d, { type: "integer", exclusiveMinimum: 0 })).toBe(1);
  });
});

describe("referenceView", () => {
  it("groups operations by tag in document order, with parameters, body, responses sorted by status, auth and the problem shape", () => {
    const view = referenceView(doc);
    expect(view.tags.map((t) => t.name)).toEqual(["Things", "Starts", "Document"]);
    const get = view.tags[0].operations[0];
    expect(get).toMatchObject({ operationId: "getThing", method: "GET", path: "/api/v1/things/{id}", public: false });
    expect(get.parameters.map((p) => [p.name, p.in, p.required])).toEqual([
      ["id", "path", true],
      ["view", "query", true],
      ["limit", "query", false],
    ]);
    expect(get.parameters[2]).toMatchObject({
      type: "integer",
      description: "Rows per page.",
      defaultValue: "100",
      constraints: ["≥ 1", "≤ 500"],
    });
    expect(get.responses.map((r) => [r.status, r.problem])).toEqual([
      ["200", false],
      ["404", true],
    ]);
    expect(get.responses[0].content.map((c) => c.mediaType)).toEqual(["application/json", "text/csv"]);
    expect(view.tags[1].operations[0].requestBody).toMatchObject({
      required: true,
      content: [{ mediaType: "application/json", schema: { type: "Start", ref: "Start" } }],
    });
    expect(view.tags[2].operations[0].public).toBe(true);
    expect(view.auth).toEqual([{ name: "bearer", type: "http", scheme: "bearer", description: "A token." }]);
    expect(view.problem?.children.map((c) => c.name)).toEqual(["status", "detail"]);
  });

  it("shows every operation of the served document, with every $ref resolved to its fields", () => {
    const real = openApiDocument({ version: "1" }) as unknown as OpenApiDoc;
    const view = referenceView(real);
    const shown = view.tags.flatMap((t) => t.operations.map((o) => `${o.method} ${o.path} ${o.operationId}`)).sort();
    const documented = Object.entries(real.paths)
      .flatMap(([p, item]) => Object.entries(item).map(([m, op]) => `${m.toUpperCase()} ${p} ${op!.operationId}`))
      .sort();
    expect(shown).toEqual(documented);
    // A named component that is not expanded is only ever one inside itself.
    const unexpanded: string[] = [];
    const walk = (n: FieldNode | null) => {
      if (!n) return;
      const schema = n.ref ? real.components?.schemas?.[n.ref] : null;
      if (schema && (schema.properties as object | undefined) && n.children.length === 0 && !n.circular)
        unexpanded.push(n.ref!);
      n.children.forEach(walk);
    };
    for (const t of view.tags)
      for (const o of t.operations) for (const r of o.responses) for (const c of r.content) walk(c.schema);
    expect(unexpanded).toEqual([]);
    expect(view.problem?.children.map((c) => c.name)).toEqual(
      expect.arrayContaining(["type", "title", "status", "detail", "instance", "code"]),
    );
    for (const t of view.tags) for (const o of t.operations) expect(o.curl).not.toMatch(/dlqc_/);
  });
});

describe("unions", () => {
  it("name each variant by the field that tells it apart", () => {
    const tree = fieldTree(doc, {
      oneOf: [
        {
          type: "object",
          properties: { kind: { type: "string", enum: ["group"] }, groupKey: { type: "string" } },
          required: ["kind", "groupKey"],
        },
        {
          type: "object",
          properties: { kind: { type: "string", const: "letters" }, ids: { type: "array", items: { type: "string" } } },
          required: ["kind"],
        },
      ],
      discriminator: { propertyName: "kind" },
    });
    expect(tree.type).toBe("one of");
    expect(tree.children.map((c) => c.name)).toEqual(['kind = "group"', 'kind = "letters"']);
    expect(tree.children[1].children[1]).toMatchObject({ name: "ids", type: "string[]" });
  });
});
