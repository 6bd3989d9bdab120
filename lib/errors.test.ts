import { describe, expect, it } from "vitest";
import { AppError, asAppError, httpStatusOf, isAppError, loggableError, toActionError } from "./errors";

/** What an AppError thrown by another bundle layer's copy of the class looks like here. */
function foreignAppError(code: string, userMessage: string) {
  const e = Object.assign(new Error("internal detail: 10.0.0.1:5672"), { code, userMessage });
  Object.defineProperty(e, Symbol.for("dlq-console.app-error"), { value: true });
  return e;
}

describe("AppError recognition", () => {
  it("keeps real AppErrors", () => {
    const e = new AppError("not_found:queue", { userMessage: "gone" });
    expect(isAppError(e)).toBe(true);
    expect(asAppError(e)).toBe(e);
  });

  it("recognises an AppError from another copy of the class by its brand", () => {
    const foreign = foreignAppError("not_found:queue", "The queue is gone.");
    expect(foreign).not.toBeInstanceOf(AppError);
    expect(isAppError(foreign)).toBe(true);
    expect(toActionError(foreign)).toEqual({ code: "not_found:queue", message: "The queue is gone." });
    expect(httpStatusOf(asAppError(foreign)!)).toBe(404);
  });

  it("never passes a raw exception message or a look-alike without the brand", () => {
    const raw = new Error("ECONNREFUSED 10.0.0.1");
    expect(asAppError(raw)).toBeNull();
    expect(toActionError(raw).message).not.toContain("ECONNREFUSED");
    expect(toActionError(raw).code).toBe("internal:server");
    expect(isAppError({ code: "not_found:queue", userMessage: "x" })).toBe(false);
  });

  it("maps error types to HTTP statuses", () => {
    const status = (code: `${string}:${string}`) => httpStatusOf(new AppError(code as never, { userMessage: "m" }));
    expect([
      status("forbidden:x"),
      status("unauthorized:x"),
      status("unavailable:broker"),
      status("confirmation_required:read"),
      status("internal:x"),
    ]).toEqual([403, 401, 503, 409, 500]);
  });
});

describe("loggableError", () => {
  it("keeps the name and stack frames but never the message, which can quote payload bytes", () => {
    // Drivers and parsers quote their input in messages, e.g. `Unexpected token in "4111…"`.
    const e = new SyntaxError('Unexpected token in JSON: {"card":"4111111111111111",');
    const logged = loggableError(e);
    expect(logged.startsWith("SyntaxError")).toBe(true);
    expect(logged).toMatch(/\n\s+at /);
    expect(logged).not.toContain("4111111111111111");
    expect(loggableError("a string")).toBe("string");
  });
});
