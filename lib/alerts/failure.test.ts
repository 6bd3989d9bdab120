import { describe, expect, it } from "vitest";
import {
  classOfLookupError,
  classOfNetworkError,
  classOfStatus,
  FAILURE_CLASSES,
  failureText,
  readFailure,
} from "./failure";

const err = (code: string) => Object.assign(new Error(`boom ${code}`), { code });

describe("failure classes", () => {
  it("class network errors by their code", () => {
    const cases: Array<[string, string]> = [
      ["ERR_TLS_CERT_ALTNAME_INVALID", "TLS: certificate name mismatch"],
      ["CERT_HAS_EXPIRED", "TLS: certificate expired"],
      ["CERT_NOT_YET_VALID", "TLS: certificate not yet valid"],
      ["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "TLS: untrusted certificate"],
      ["DEPTH_ZERO_SELF_SIGNED_CERT", "TLS: untrusted certificate"],
      ["SELF_SIGNED_CERT_IN_CHAIN", "TLS: untrusted certificate"],
      ["ERR_SSL_WRONG_VERSION_NUMBER", "TLS: handshake failed"],
      ["SOME_FUTURE_CERT_PROBLEM", "TLS: handshake failed"],
      ["ECONNREFUSED", "connection refused"],
      ["ECONNRESET", "connection reset"],
      ["ETIMEDOUT", "timed out"],
      ["EHOSTUNREACH", "network unreachable"],
      ["ENOTFOUND", "DNS: name not found"],
      ["EAI_AGAIN", "DNS: lookup failed"],
      ["EWHATEVER", "network error"],
    ];
    expect(cases.map(([code]) => [code, classOfNetworkError(err(code))])).toEqual(cases);
    expect(classOfNetworkError(new Error("no code"))).toBe("network error");
    expect(classOfNetworkError(null)).toBe("network error");
    expect(classOfLookupError(err("ENOTFOUND"))).toBe("DNS: name not found");
    expect(classOfLookupError(new Error("lookup took over 5000 ms"))).toBe("DNS: lookup failed");
  });

  it("class receivers' answers by status", () => {
    expect([302, 404, 429, 500, 503, 600].map(classOfStatus)).toEqual([
      "HTTP 3xx: redirect not followed",
      "HTTP 4xx",
      "HTTP 4xx",
      "HTTP 5xx",
      "HTTP 5xx",
      "HTTP error",
    ]);
  });

  it("reads the class from its own column, the detail from the text", () => {
    const detail =
      "No answer from hooks.example.com: ERR_TLS_CERT_ALTNAME_INVALID, Host: hooks.example.com. is not in the cert's altnames: DNS:internal.corp";
    const row = (lastErrorClass: string | null, lastError: string | null, statusCode: number | null = null) => ({
      lastErrorClass,
      lastError,
      statusCode,
    });
    expect(readFailure(row("TLS: certificate name mismatch", detail))).toEqual({
      errorClass: "TLS: certificate name mismatch",
      detail,
    });
    // The detail is never searched for a class when the column holds one.
    expect(readFailure(row("HTTP 5xx", "connection refused — x", 502))).toEqual({
      errorClass: "HTTP 5xx",
      detail: "connection refused — x",
    });
    expect(readFailure(row(null, null, 500))).toBeNull();
    for (const cls of FAILURE_CLASSES) {
      expect(readFailure(row(cls, "x — y"))).toEqual({ errorClass: cls, detail: "x — y" });
    }
  });

  it("reads rows written before the column: only a known class at the head, anything else is detail", () => {
    const row = (lastError: string | null, statusCode: number | null = null) => ({
      lastErrorClass: null,
      lastError,
      statusCode,
    });
    expect(readFailure(row("timed out — No answer from h: ETIMEDOUT"))).toEqual({
      errorClass: "timed out",
      detail: "No answer from h: ETIMEDOUT",
    });
    expect(readFailure(row("127.0.0.1:9 answered HTTP 503: down", 503))).toEqual({
      errorClass: "HTTP 5xx",
      detail: "127.0.0.1:9 answered HTTP 503: down",
    });
    expect(readFailure(row("DNS:internal.corp — leaked"))).toEqual({
      errorClass: "delivery failed",
      detail: "DNS:internal.corp — leaked",
    });
    // A column value that is not a known class is not believed either.
    expect(readFailure({ lastErrorClass: "DNS:internal.corp", lastError: "leaked", statusCode: null })).toEqual({
      errorClass: "delivery failed",
      detail: "leaked",
    });
  });

  it("writes one line for an admin", () => {
    expect(failureText({ errorClass: "HTTP 4xx", detail: "h answered HTTP 404" })).toBe(
      "HTTP 4xx — h answered HTTP 404",
    );
  });
});
