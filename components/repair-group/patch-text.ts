/**
 * The group repair's patch as the admin types it (pure, client-safe): JSON text read into the
 * patch the redrive plan carries (lib/redrive/plan.ts), or where the text stops being JSON. The
 * place is found by a small scanner of its own rather than from JSON.parse's message, whose wording
 * and positions differ between JavaScript engines.
 */

export type PatchKind = "json-patch" | "merge-patch";

export type PayloadPatch = { kind: "json-patch"; operations: Array<Record<string, unknown>> } | { kind: "merge-patch"; patch: unknown };

export type PatchRead = { ok: true; patch: PayloadPatch } | { ok: false; message: string; line?: number; column?: number };

/** The first offset at which `text` is not JSON, or null when it is. */
export function firstJsonError(text: string): { offset: number; message: string } | null {
  let i = 0;
  const fail = (message: string): never => {
    throw { offset: i, message };
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const literal = (word: string) => {
    for (const c of word) {
      if (text[i] !== c) fail(`Expected ${word}`);
      i++;
    }
  };
  const string = () => {
    i++; // the opening quote
    while (i < text.length) {
      const c = text[i];
      if (c === '"') return void i++;
      if (c < " ") fail("A control character (a line break?) inside a string");
      if (c === "\\") {
        i++;
        const e = text[i];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail("A \\u escape needs four hex digits");
          i += 5;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail("Not a valid escape in a string");
      } else i++;
    }
    fail("A string that is never closed");
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m || m[0] === "-") fail("Not a valid number");
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === undefined) fail("The JSON ends where a value was expected");
    if (c === "{") return object();
    if (c === "[") return array();
    if (c === '"') return string();
    if (c === "-" || (c >= "0" && c <= "9")) return number();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    fail(`Unexpected ${JSON.stringify(c)} where a value was expected`);
  };
  const object = () => {
    i++;
    ws();
    if (text[i] === "}") return void i++;
    for (;;) {
      ws();
      if (text[i] !== '"') fail("Expected a property name in double quotes");
      string();
      ws();
      if (text[i] !== ":") fail("Expected ':' after the property name");
      i++;
      value();
      ws();
      if (text[i] === ",") i++;
      else if (text[i] === "}") return void i++;
      else fail("Expected ',' or '}' after a property value");
    }
  };
  const array = () => {
    i++;
    ws();
    if (text[i] === "]") return void i++;
    for (;;) {
      value();
      ws();
      if (text[i] === ",") i++;
      else if (text[i] === "]") return void i++;
      else fail("Expected ',' or ']' after an array element");
    }
  };
  try {
    value();
    ws();
    if (i < text.length) fail("Unexpected text after the JSON value");
    return null;
  } catch (e) {
    if (e && typeof e === "object" && "offset" in e) return e as { offset: number; message: string };
    throw e;
  }
}

/** 1-based line and column of an offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}

/**
 * The patch the text stands for, or why not: a JSON error with its line and column; a JSON Patch
 * must be a non-empty array of operation objects. The server checks each operation again.
 */
export function readPatch(kind: PatchKind, text: string): PatchRead {
  if (text.trim() === "") return { ok: false, message: kind === "json-patch" ? "Enter a JSON Patch: an array of operations." : "Enter a JSON merge patch: an object." };
  const err = firstJsonError(text);
  if (err) {
    const { line, column } = lineColumn(text, err.offset);
    return { ok: false, message: `The patch is not valid JSON at line ${line}, column ${column}: ${err.message}.`, line, column };
  }
  const value: unknown = JSON.parse(text);
  if (kind === "merge-patch") return { ok: true, patch: { kind, patch: value } };
  if (!Array.isArray(value) || value.length === 0) return { ok: false, message: "A JSON Patch (RFC 6902) is an array of operations, such as [{\"op\":\"replace\",\"path\":\"/status\",\"value\":\"PAID\"}]." };
  const bad = value.findIndex((o) => o === null || typeof o !== "object" || Array.isArray(o) || typeof (o as { op?: unknown }).op !== "string");
  if (bad >= 0) return { ok: false, message: `Operation ${bad + 1} is not an operation object with an "op".` };
  return { ok: true, patch: { kind, operations: value as Array<Record<string, unknown>> } };
}
