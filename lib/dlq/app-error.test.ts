import { describe, expect, it } from "vitest";
import { AppError } from "@/lib/errors";
import { asAppError, toSafeError } from "./app-error";

describe("asAppError", () => {
  it("keeps real AppErrors", () => {
    const e = new AppError("not_found:queue", { userMessage: "gone" });
    expect(asAppError(e)).toBe(e);
  });
  it("recognises an AppError from another copy of the class", () => {
    const foreign = Object.assign(new Error("internal detail"), { code: "not_found:queue", userMessage: "The queue is gone." });
    const e = asAppError(foreign);
    expect(e).toBeInstanceOf(AppError);
    expect(e?.type).toBe("not_found");
    expect(toSafeError(foreign)).toEqual({ code: "not_found:queue", message: "The queue is gone." });
  });
  it("never passes a raw exception message", () => {
    expect(asAppError(new Error("ECONNREFUSED 10.0.0.1"))).toBeNull();
    expect(toSafeError(new Error("ECONNREFUSED 10.0.0.1")).message).not.toContain("ECONNREFUSED");
    expect(asAppError({ code: "ENOENT", userMessage: "x" })).toBeNull();
  });
});
