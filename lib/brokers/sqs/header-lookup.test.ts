import { describe, expect, it } from "vitest";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import { headerText } from "@/lib/brokers/display";
import { headerLookup } from "@/lib/brokers/sqs/letter";

const s = (name: string, v: string): HeaderEntry => ({ name, value: { t: "string", v } });

describe("headerLookup (the SQS letter's header lookups, names looked up once)", () => {
  // Exact before any case, first of several, an empty exact value not replaced by another case,
  // bytes without text, and names nobody carries.
  const sets: HeaderEntry[][] = [
    [],
    [s("x-exception-class", "A"), s("X-Exception-Class", "B")],
    [s("X-EXCEPTION-CLASS", "upper"), s("exceptionClass", "")],
    [s("exceptionClass", ""), s("EXCEPTIONCLASS", "other case")],
    [s("errorType", "T"), s("errortype", "t"), s("errorType", "second")],
    [{ name: "ErrorMessage", value: { t: "bytes", v: "AAE=", size: 2 } }, s("errorMessage", "text")],
    [s("correlation-id", "c1"), s("Correlation-Id", "c2"), { name: "content-type", value: { t: "null" } }],
  ];
  const asks = [
    ["exceptionClass", "exception-class", "x-exception-class", "errorType"],
    ["exceptionClass"],
    ["errorMessage", "ErrorMessage"],
    ["ErrorMessage"],
    ["correlationId", "correlation-id", "correlation_id"],
    ["contentType", "content-type", "Content-Type"],
    ["nobody"],
  ];

  it("answers as display's headerText does, for every name list", () => {
    for (const headers of sets) {
      const find = headerLookup(headers);
      for (const names of asks)
        expect(find.text(...names), JSON.stringify({ headers, names })).toBe(headerText(headers, ...names));
    }
  });

  it("has() is by exact name", () => {
    const find = headerLookup([s("RequestID", "r")]);
    expect(find.has("RequestID")).toBe(true);
    expect(find.has("requestid")).toBe(false);
  });
});
