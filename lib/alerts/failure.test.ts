import { describe, expect, it } from "vitest";
import {
  classOfLookupError,
  classOfNetworkError,
  classOfStatus,
  describeFailure,
  FAILURE_CLASSES,
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

  it("read back only a known class; anything else is detail", () => {
    const detail =
      "No answer from hooks.example.com: ERR_TLS_CERT_ALTNAME_INVALID, Host: hooks.example.com. is not in the cert's altnames: DNS:internal.corp";
    expect(readFailure(describeFailure("TLS: certificate name mismatch", detail), null)).toEqual({
      errorClass: "TLS: certificate name mismatch",
      detail,
    });
    expect(readFailure(null, 500)).toBeNull();
    // Written before classes were kept, or a head that is not a class: the whole text is detail.
    expect(readFailure("127.0.0.1:9 answered HTTP 503: down", 503)).toEqual({
      errorClass: "HTTP 5xx",
      detail: "127.0.0.1:9 answered HTTP 503: down",
    });
    expect(readFailure("DNS:internal.corp — leaked", null)).toEqual({
      errorClass: "delivery failed",
      detail: "DNS:internal.corp — leaked",
    });
    for (const cls of FAILURE_CLASSES) {
      expect(readFailure(describeFailure(cls, "x — y"), null)).toEqual({ errorClass: cls, detail: "x — y" });
    }
  });
});
