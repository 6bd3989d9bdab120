/**
 * Where a JSON text stops being JSON (RFC 8259), as 1-based line and column with a reason in
 * operator words. Pure and browser-safe: the repair editor checks as the admin types, and the
 * server checks the same text with the same function, so both name the same place.
 *
 * JSON.parse decides whether the text is valid; a small scanner only finds where it is not. The
 * parsers' own messages are not used for that, because each engine words them differently (V8
 * names a position or echoes the input, Firefox names line and column, Safari neither).
 */

export interface JsonSyntaxError {
  line: number;
  column: number;
  message: string;
}

export function jsonSyntaxError(text: string): JsonSyntaxError | null {
  try {
    JSON.parse(text);
    return null;
  } catch {
    // The scanner should always find the fault JSON.parse found; if it ever does not, the end of the text is the honest answer.
    const found = locate(text) ?? { pos: text.length, message: "Not valid JSON" };
    const before = text.slice(0, found.pos);
    const line = before.split("\n").length;
    const column = found.pos - before.lastIndexOf("\n");
    return { line, column, message: found.message };
  }
}

class Fault {
  constructor(
    readonly pos: number,
    readonly message: string,
  ) {}
}

const WS = " \t\n\r";
const DIGIT = /[0-9]/;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** The first offset no JSON text can have, with why; null when the scanner finds none. Iterative, so deep nesting cannot overflow the stack. */
function locate(text: string): { pos: number; message: string } | null {
  let i = 0;
  const found = () => (i >= text.length ? "the end of the text" : `'${text[i]}'`);
  const fail = (message: string): never => {
    throw new Fault(i, message);
  };
  const skipWs = () => {
    while (i < text.length && WS.includes(text[i])) i++;
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) fail("A string is not closed (a '\"' is missing)");
      const c = text[i];
      if (c === '"') return void i++;
      if (c < " ") fail("A raw control character (a line break or tab) inside a string; write it as \\n or \\t");
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u") {
          if (!HEX4.test(text.slice(i + 2, i + 6))) fail("\\u must be followed by four hex digits");
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail('Not a valid escape in a string (\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)');
      } else i++;
    }
  };
  const digits = (what: string) => {
    if (!DIGIT.test(text[i] ?? "")) fail(`Expected a digit ${what}, found ${found()}`);
    while (DIGIT.test(text[i] ?? "")) i++;
  };
  const number = () => {
    if (text[i] === "-") i++;
    if (text[i] === "0") i++;
    else digits("in the number");
    if (text[i] === ".") {
      i++;
      digits("after the decimal point");
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      digits("in the exponent");
    }
  };
  const key = () => {
    skipWs();
    if (text[i] !== '"') fail(`Expected a property name in double quotes, found ${found()}`);
    string();
    skipWs();
    if (text[i] !== ":") fail(`Expected ':' after the property name, found ${found()}`);
    i++;
  };

  const stack: Array<"}" | "]"> = [];
  try {
    for (;;) {
      // A value is expected here.
      skipWs();
      const c = text[i];
      let opened = false;
      if (c === "{" || c === "[") {
        const close = c === "{" ? "}" : "]";
        i++;
        skipWs();
        if (text[i] === close) i++;
        else {
          stack.push(close);
          if (close === "}") key();
          opened = true;
        }
      } else if (c === '"') string();
      else if (c === "-" || DIGIT.test(c ?? "")) number();
      else {
        const word = ["true", "false", "null"].find((w) => text.startsWith(w, i));
        if (!word) fail(`Expected a value (a string, number, object, array, true, false or null), found ${found()}`);
        i += word!.length;
      }
      if (opened) continue;
      // After a value: a comma, the close of its container, or (at the top) the end of the text.
      let next = false;
      while (!next) {
        skipWs();
        const close = stack[stack.length - 1];
        if (close === undefined) {
          if (i < text.length) fail(`Unexpected ${found()} after the end of the JSON value`);
          return null;
        }
        if (text[i] === ",") {
          i++;
          if (close === "}") key();
          next = true;
        } else if (text[i] === close) {
          i++;
          stack.pop();
        } else {
          fail(
            `Expected ',' or '${close}' after ${close === "}" ? "a property value" : "an array element"}, found ${found()}`,
          );
        }
      }
    }
  } catch (e) {
    if (e instanceof Fault) return { pos: e.pos, message: e.message };
    throw e;
  }
}
