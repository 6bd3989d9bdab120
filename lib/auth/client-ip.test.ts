import { describe, expect, it } from "vitest";
import { asTheAppSeesIt } from "./forwarding-test-kit";
import { clientIdentity, clientIp, normalizeIp, parseTrustedProxies, resolveClient } from "./client-ip";

const NONE = parseTrustedProxies([]);
const LB = parseTrustedProxies(["10.0.0.0/8", "fd00::/8"]);

describe("client address and request id: trusted only from configured proxies", () => {
  it("ignores forwarding headers and a request id from a peer that is not a trusted proxy", () => {
    const h = asTheAppSeesIt(
      { "x-forwarded-for": "6.6.6.6", "x-real-ip": "7.7.7.7", "x-request-id": "i-choose-this-id" },
      "203.0.113.9",
    );
    // The default setting (DLQ_TRUSTED_PROXIES unset): what the sign-in limiter and the audit rows use.
    expect(clientIp(h)).toBe("203.0.113.9");
    for (const trusted of [NONE, LB]) {
      const who = clientIdentity(h, trusted);
      expect(who.ip).toBe("203.0.113.9");
      expect(who.viaTrustedProxy).toBe(false);
      expect(who.requestId).not.toBe("i-choose-this-id");
      expect(who.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(who.clientRequestId).toBe("i-choose-this-id");
    }
  });

  it("with no header at all, the address is the socket's and the id the server's", () => {
    const who = clientIdentity(asTheAppSeesIt({}, "198.51.100.7"), LB);
    expect(who).toMatchObject({ ip: "198.51.100.7", clientRequestId: null, viaTrustedProxy: false });
  });

  it("behind trusted proxies: walks X-Forwarded-For from the right past them, believes their request id", () => {
    // client 198.51.100.23 → proxy 10.1.1.1 → proxy 10.2.2.2 → console; what the client wrote first is not believed.
    const h = asTheAppSeesIt(
      { "x-forwarded-for": "6.6.6.6, 198.51.100.23, 10.1.1.1", "x-request-id": "lb-req-42" },
      "10.2.2.2",
    );
    expect(clientIdentity(h, LB)).toMatchObject({
      ip: "198.51.100.23",
      requestId: "lb-req-42",
      clientRequestId: null,
      viaTrustedProxy: true,
    });
    // The same request with nothing trusted: the proxy is the client.
    expect(clientIdentity(h, NONE).ip).toBe("10.2.2.2");
  });

  it("takes X-Real-IP from a trusted proxy only when there is no chain", () => {
    expect(clientIdentity(asTheAppSeesIt({ "x-real-ip": "198.51.100.5" }, "10.0.0.3"), LB).ip).toBe("198.51.100.5");
    expect(clientIdentity(asTheAppSeesIt({ "x-real-ip": "198.51.100.5" }, "192.0.2.1"), LB).ip).toBe("192.0.2.1");
  });

  it("stops at an unreadable hop with the last address it could believe, and when all hops are trusted takes the furthest", () => {
    expect(
      resolveClient(
        {
          peer: "10.0.0.1",
          forwardedFor: "1.2.3.4, <script>, 10.9.9.9",
          realIp: null,
          requestId: null,
          serverRequestId: null,
        },
        LB,
      ).ip,
    ).toBe("10.9.9.9");
    expect(
      resolveClient(
        { peer: "10.0.0.1", forwardedFor: "10.0.0.7, 10.0.0.8", realIp: null, requestId: null, serverRequestId: null },
        LB,
      ).ip,
    ).toBe("10.0.0.7");
  });

  it("matches CIDR ranges, IPv6 and IPv4-mapped peers (a dual-stack socket's IPv4 clients)", () => {
    const t = parseTrustedProxies(["192.168.4.0/22", "2001:db8::/32", "127.0.0.1"]);
    expect(t.has("192.168.7.255")).toBe(true);
    expect(t.has("192.168.8.0")).toBe(false);
    expect(t.has("2001:db8:ffff::1")).toBe(true);
    expect(t.has("2001:db9::1")).toBe(false);
    const mapped = asTheAppSeesIt({ "x-forwarded-for": "2001:db8::5, 198.51.100.1" }, "::ffff:127.0.0.1");
    expect(clientIdentity(mapped, t)).toMatchObject({ ip: "198.51.100.1", viaTrustedProxy: true });
    expect(
      clientIdentity(asTheAppSeesIt({ "x-forwarded-for": "[2001:DB8:0::9]:443" }, "::1"), parseTrustedProxies(["::1"]))
        .ip,
    ).toBe("2001:db8::9");
    expect(clientIdentity(asTheAppSeesIt({ "x-forwarded-for": "198.51.100.1" }, "::ffff:203.0.113.4"), t).ip).toBe(
      "203.0.113.4",
    );
  });

  it("reports bad setting entries and ignores them", () => {
    const t = parseTrustedProxies(["10.0.0.0/33", "proxy.internal", "1.2.3.4/8/1", "::1/129", " 10.0.0.1 "]);
    expect(t.invalid).toEqual(["10.0.0.0/33", "proxy.internal", "1.2.3.4/8/1", "::1/129"]);
    expect(t.has("10.0.0.1")).toBe(true);
  });

  it("bounds and cleans what it records: addresses canonical, a client's id cut to 128 safe characters", () => {
    expect(normalizeIp("1.2.3.4\r\nX-Evil: 1")).toBeNull();
    expect(normalizeIp("::FFFF:7F00:1")).toBe("127.0.0.1");
    expect(normalizeIp("1.2.3.4:8080")).toBe("1.2.3.4");
    expect(normalizeIp("fe80::1%eth0")).toBe("fe80::1");
    const who = resolveClient(
      {
        peer: "192.0.2.1",
        forwardedFor: null,
        realIp: null,
        requestId: `a\u0000b\u001bc${"x".repeat(500)}`,
        serverRequestId: "srv-1",
      },
      NONE,
    );
    expect(who.requestId).toBe("srv-1");
    expect(who.clientRequestId).toMatch(/^abcx{125}$/);
    // A trusted proxy's id with characters outside the set is not the row's id either.
    const odd = resolveClient(
      { peer: "10.0.0.1", forwardedFor: null, realIp: null, requestId: "id with spaces", serverRequestId: "srv-2" },
      LB,
    );
    expect(odd).toMatchObject({ requestId: "srv-2", clientRequestId: "idwithspaces" });
  });
});
