import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { referenceView, type OpenApiDoc } from "@/lib/api/reference";
import { openApiDocument } from "@/lib/api/registry";
import "@/lib/api/v1";
import { FieldTree } from "./field-tree";
import { OperationCard } from "./operation-card";

/** The reference page's parts rendered to HTML from the served document, as the page renders them. */
const view = referenceView(openApiDocument({ version: "1" }) as unknown as OpenApiDoc);
const ops = view.tags.flatMap((t) => t.operations);
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, "")
    .replaceAll("&quot;", '"')
    .replaceAll("&#x27;", "'")
    .replaceAll("&amp;", "&")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">");

describe("OperationCard", () => {
  it.each(ops.map((o) => [o.operationId, o] as const))(
    "shows %s: method, path, summary, parameters, responses and its curl line",
    (_id, op) => {
      const html = renderToStaticMarkup(createElement(OperationCard, { op }));
      const shown = text(html);
      expect(html).toContain(`id="${op.operationId}"`);
      expect(shown).toContain(op.method);
      expect(shown).toContain(op.path);
      expect(shown).toContain(op.summary);
      if (op.description) expect(shown).toContain(op.description);
      for (const p of op.parameters) expect(shown).toContain(p.name);
      for (const r of op.responses) expect(html).toContain(`data-status="${r.status}"`);
      expect(shown).toContain(op.curl);
      // Never a real token: only the placeholder.
      expect(shown).not.toMatch(/dlqc_[0-9A-Za-z]{10,}/);
      expect(shown).toContain(op.public ? "no token needed" : "Bearer $DLQ_CONSOLE_TOKEN");
    },
  );

  it("shows a request body's fields with their types and whether they are required", () => {
    const withBody = ops.find((o) => o.requestBody)!;
    const html = renderToStaticMarkup(createElement(OperationCard, { op: withBody }));
    const root = withBody.requestBody!.content[0].schema!;
    for (const f of root.children) expect(text(html)).toContain(`${f.name} ${f.type}`);
  });
});

describe("FieldTree", () => {
  it("shows the problem shape's fields with their descriptions", () => {
    const shown = text(renderToStaticMarkup(createElement(FieldTree, { node: view.problem! })));
    for (const f of view.problem!.children) {
      expect(shown).toContain(`${f.name} ${f.type}`);
      if (f.description) expect(shown).toContain(f.description);
    }
  });
});
