import { describe, expect, it } from "vitest";
import { jsonSyntaxError } from "./json-syntax";

describe("jsonSyntaxError", () => {
  it("accepts valid JSON of every kind, whitespace around it included", () => {
    for (const t of [
      '{"a":1}',
      "[1, 2]",
      ' \n{"a": [true, false, null, -0.5e+3, "x\\u00e9\\n"], "b": {}}\n',
      '"s"',
      "0",
      "[]",
    ]) {
      expect(jsonSyntaxError(t)).toBeNull();
    }
  });

  it("names the line and column of the first token no JSON text can have", () => {
    // A missing comma: the next property's quote is the fault.
    expect(jsonSyntaxError('{\n  "order": 1,\n  "status": "PAID"\n  "note": 1\n}')).toMatchObject({
      line: 4,
      column: 3,
      message: expect.stringMatching(/Expected ',' or '}'/),
    });
    // A missing value.
    expect(jsonSyntaxError('{\n  "a": 1,\n  "b": }\n')).toMatchObject({
      line: 3,
      column: 8,
      message: expect.stringMatching(/Expected a value/),
    });
    // A trailing comma in an array and in an object.
    expect(jsonSyntaxError("[1, 2,]")).toMatchObject({ line: 1, column: 7 });
    expect(jsonSyntaxError('{"a": 1,\n}')).toMatchObject({
      line: 2,
      column: 1,
      message: expect.stringMatching(/property name in double quotes/),
    });
    // A bare word where a value belongs.
    expect(jsonSyntaxError('{"status": PAYED}')).toMatchObject({
      line: 1,
      column: 12,
      message: expect.stringContaining("found 'P'"),
    });
    // A single-quoted key.
    expect(jsonSyntaxError("{'a': 1}")).toMatchObject({ line: 1, column: 2 });
  });

  it("points at the end of the text when it stops too early", () => {
    expect(jsonSyntaxError('{"a":1')).toMatchObject({
      line: 1,
      column: 7,
      message: expect.stringContaining("the end of the text"),
    });
    expect(jsonSyntaxError('[\n"open')).toMatchObject({
      line: 2,
      column: 6,
      message: expect.stringMatching(/not closed/),
    });
    expect(jsonSyntaxError("")).toMatchObject({ line: 1, column: 1 });
  });

  it("finds faults inside strings and numbers, and text after the value", () => {
    expect(jsonSyntaxError('{"a": "x\ty"}')).toMatchObject({
      line: 1,
      column: 9,
      message: expect.stringMatching(/control character/),
    });
    expect(jsonSyntaxError('["\\q"]')).toMatchObject({ line: 1, column: 3, message: expect.stringMatching(/escape/) });
    expect(jsonSyntaxError("[1.]")).toMatchObject({
      line: 1,
      column: 4,
      message: expect.stringMatching(/decimal point/),
    });
    expect(jsonSyntaxError("[01]")).toMatchObject({ line: 1, column: 3 });
    expect(jsonSyntaxError('{"a":1} x')).toMatchObject({
      line: 1,
      column: 9,
      message: expect.stringMatching(/after the end/),
    });
  });

  it("copes with nesting far deeper than a recursive scanner could", () => {
    const deep = "[".repeat(100_000) + "]".repeat(99_999);
    expect(jsonSyntaxError(deep)).toMatchObject({ line: 1, column: 200_000 });
  });
});
