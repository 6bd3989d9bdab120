import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { VisibleText } from "./visible-text";

const html = (text: string) => renderToStaticMarkup(createElement(VisibleText, { text }));

describe("VisibleText", () => {
  it("wraps each hidden character in an isolated marker that names it, and escapes markup", () => {
    const out = html("<b>invoice-\u202Egpj.exe</b>");
    expect(out).toBe(
      '<bdi>&lt;b&gt;invoice-<span class="hidden-char hidden-char-bidi" data-cp="U+202E" data-testid="hidden-char" title="U+202E RIGHT-TO-LEFT OVERRIDE">\u202E</span>gpj.exe&lt;/b&gt;</bdi>',
    );
  });

  it("renders ordinary text as one isolated run", () => {
    expect(html("order 42 failed")).toBe("<bdi>order 42 failed</bdi>");
  });

  it("keeps the text content equal to the text as received", () => {
    const t = "a\u200Bb\u2066c\u2069\uFEFF";
    const out = html(t).replace(/<[^>]+>/g, "");
    expect(out).toBe(t);
  });
});
