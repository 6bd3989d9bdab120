/**
 * A small JSON parser for masking: keeps number tokens verbatim (64-bit ids stay exact), keeps
 * object members as an ordered list (so `__proto__` or duplicate keys are plain data, never object
 * prototypes), and is bounded in depth and node count. Throws JsonLimitError past a bound and
 * SyntaxError on invalid input.
 */

export type JNode =
  | { t: "obj"; members: Array<[string, JNode]> }
  | { t: "arr"; items: JNode[] }
  | { t: "str"; v: string }
  | { t: "num"; raw: string }
  | { t: "lit"; raw: "true" | "false" | "null" };

export class JsonLimitError extends Error {}

export interface JsonLimits {
  maxDepth: number;
  maxNodes: number;
}

export function parseJson(text: string, limits: JsonLimits): JNode {
  let i = 0;
  let nodes = 0;
  const n = text.length;
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
  };
  const fail = (what: string): never => {
    throw new SyntaxError(`JSON: ${what} at ${i}`);
  };
  const str = (): string => {
    const start = i;
    i++;
    let simple = true;
    while (i < n && text[i] !== '"') {
      if (text[i] === "\\") {
        simple = false;
        i += 2;
      } else i++;
    }
    if (i >= n) fail("unterminated string");
    i++;
    const raw = text.slice(start, i);
    return simple ? raw.slice(1, -1) : (JSON.parse(raw) as string);
  };
  const value = (depth: number): JNode => {
    if (++nodes > limits.maxNodes) throw new JsonLimitError(`more than ${limits.maxNodes} values`);
    ws();
    const c = text[i];
    if (c === "{" || c === "[") {
      if (depth >= limits.maxDepth) throw new JsonLimitError(`nested deeper than ${limits.maxDepth} levels`);
      i++;
      ws();
      if (c === "{") {
        const members: Array<[string, JNode]> = [];
        if (text[i] === "}") {
          i++;
          return { t: "obj", members };
        }
        for (;;) {
          ws();
          if (text[i] !== '"') fail("expected a key");
          const key = str();
          ws();
          if (text[i] !== ":") fail('expected ":"');
          i++;
          members.push([key, value(depth + 1)]);
          ws();
          if (text[i] === ",") i++;
          else if (text[i] === "}") {
            i++;
            return { t: "obj", members };
          } else fail('expected "," or "}"');
        }
      }
      const items: JNode[] = [];
      if (text[i] === "]") {
        i++;
        return { t: "arr", items };
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") {
          i++;
          return { t: "arr", items };
        } else fail('expected "," or "]"');
      }
    }
    if (c === '"') return { t: "str", v: str() };
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m?.[0]) {
      i += m[0].length;
      return { t: "num", raw: m[0] };
    }
    for (const lit of ["true", "false", "null"] as const) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return { t: "lit", raw: lit };
      }
    }
    return fail("unexpected character");
  };
  const root = value(0);
  ws();
  if (i !== n) fail("trailing characters");
  return root;
}

/** Pretty-prints with two-space indent; stops once `maxChars` is passed (cut: true). */
export function stringifyJson(root: JNode, maxChars: number): { text: string; cut: boolean } {
  const out: string[] = [];
  let size = 0;
  const push = (s: string) => {
    out.push(s);
    size += s.length;
  };
  const walk = (node: JNode, depth: number) => {
    if (size > maxChars) return;
    const pad = `\n${"  ".repeat(depth + 1)}`;
    switch (node.t) {
      case "str":
        push(JSON.stringify(node.v));
        return;
      case "num":
      case "lit":
        push(node.raw);
        return;
      case "arr":
        if (!node.items.length) return push("[]");
        push("[");
        node.items.forEach((item, k) => {
          push((k ? "," : "") + pad);
          walk(item, depth + 1);
        });
        push(`\n${"  ".repeat(depth)}]`);
        return;
      case "obj":
        if (!node.members.length) return push("{}");
        push("{");
        node.members.forEach(([key, item], k) => {
          push(`${k ? "," : ""}${pad}${JSON.stringify(key)}: `);
          walk(item, depth + 1);
        });
        push(`\n${"  ".repeat(depth)}}`);
        return;
    }
  };
  walk(root, 0);
  const text = out.join("");
  return text.length > maxChars ? { text: text.slice(0, maxChars), cut: true } : { text, cut: false };
}

/** Compact text of a node (for hashing a matched object or array). */
export function compactJson(node: JNode): string {
  switch (node.t) {
    case "str":
      return JSON.stringify(node.v);
    case "num":
    case "lit":
      return node.raw;
    case "arr":
      return `[${node.items.map(compactJson).join(",")}]`;
    case "obj":
      return `{${node.members.map(([k, v]) => `${JSON.stringify(k)}:${compactJson(v)}`).join(",")}}`;
  }
}
