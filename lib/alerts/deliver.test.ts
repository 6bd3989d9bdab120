import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attempt, BACKOFF_MS, MAX_ATTEMPTS, retryPolicy } from "./deliver";
import { failureText } from "./failure";
import { postJson } from "./send";
import type { TargetPolicy } from "./target";

describe("retryPolicy", () => {
  const fail = {
    ok: false as const,
    statusCode: 500,
    failure: { errorClass: "HTTP 5xx" as const, detail: "127.0.0.1 answered HTTP 500" },
    permanent: false,
  };
  it("backs off 30 s, 2 min, 10 min, 1 h, 1 h, then gives up after the 6th attempt", () => {
    const waits = [1, 2, 3, 4, 5].map((n) => retryPolicy(fail, n));
    expect(waits.map((w) => w.state)).toEqual(["pending", "pending", "pending", "pending", "pending"]);
    expect(waits.map((w) => w.retryInMs)).toEqual([30_000, 120_000, 600_000, 3_600_000, 3_600_000]);
    expect(MAX_ATTEMPTS).toBe(6);
    expect(BACKOFF_MS).toHaveLength(5);
    expect(retryPolicy(fail, 6)).toEqual({
      state: "failed",
      statusCode: 500,
      failure: { errorClass: "HTTP 5xx", detail: "127.0.0.1 answered HTTP 500 (gave up after 6 attempts)" },
    });
  });
  it("gives up at once when retrying cannot help, and records a success", () => {
    const notFound = { errorClass: "HTTP 4xx" as const, detail: "no_service" };
    expect(retryPolicy({ ok: false, statusCode: 404, failure: notFound, permanent: true }, 1)).toEqual({
      state: "failed",
      statusCode: 404,
      failure: notFound,
    });
    expect(retryPolicy({ ok: true, statusCode: 200 }, 3)).toEqual({
      state: "delivered",
      statusCode: 200,
      failure: null,
    });
  });
});

describe("sending", () => {
  const seen: Array<{ host: string | undefined; body: string; path: string | undefined }> = [];
  let answer: (res: http.ServerResponse) => void = (res) => res.end("ok");
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ host: req.headers.host, body, path: req.url });
      answer(res);
    });
  });
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("connects to the vetted address, never resolving the name again (no DNS rebinding)", async () => {
    seen.length = 0;
    // "rebind.invalid" resolves nowhere: the request can only reach the server through the vetted address.
    const target = {
      url: new URL(`http://rebind.invalid:${port}/hook?x=1`),
      hostname: "rebind.invalid",
      port,
      addresses: [{ address: "127.0.0.1", family: 4 as const }],
      allowListed: true,
    };
    const r = await postJson(target, JSON.stringify({ text: "hi" }));
    expect(r.statusCode).toBe(200);
    expect(seen).toEqual([{ host: `rebind.invalid:${port}`, body: '{"text":"hi"}', path: "/hook?x=1" }]);
  });

  const allow: TargetPolicy = { allowedHosts: ["127.0.0.1"], databases: [], lookup: async () => [] };

  it("does not follow redirects", async () => {
    seen.length = 0;
    answer = (res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` });
      res.end();
    };
    const r = await attempt(`http://127.0.0.1:${port}/hook`, { text: "x" }, allow);
    expect(r).toEqual({
      ok: false,
      statusCode: 302,
      failure: {
        errorClass: "HTTP 3xx: redirect not followed",
        detail: `127.0.0.1:${port} redirected (redirects are not followed; give the final URL)`,
      },
      permanent: true,
    });
    expect(seen.map((s) => s.path)).toEqual(["/hook"]);
  });

  it("gives up on a receiver that does not answer in time, as a retryable failure", async () => {
    answer = () => undefined;
    const started = Date.now();
    const r = await attempt(`http://127.0.0.1:${port}/slow`, { text: "x" }, allow, 300);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(r).toMatchObject({ ok: false, statusCode: null, permanent: false });
    expect(r.ok === false && r.failure.errorClass).toBe("timed out");
    expect(r.ok === false && r.failure.detail).toMatch(
      /^No answer from 127\.0\.0\.1:\d+: ETIMEDOUT, no answer within 0\.3 s$/,
    );
  });

  it("records the receiver's answer with its status, control characters removed", async () => {
    answer = (res) => {
      res.writeHead(400);
      res.end("invalid_payload\n\u001b[31mred");
    };
    const r = await attempt(`http://127.0.0.1:${port}/bad`, { text: "x" }, allow);
    expect(r).toEqual({
      ok: false,
      statusCode: 400,
      failure: { errorClass: "HTTP 4xx", detail: `127.0.0.1:${port} answered HTTP 400: invalid_payload [31mred` },
      permanent: true,
    });
  });

  it("refuses a target the policy refuses, without sending", async () => {
    seen.length = 0;
    const r = await attempt(`http://127.0.0.1:${port}/hook`, { text: "x" }, { ...allow, allowedHosts: [] });
    expect(r).toMatchObject({ ok: false, statusCode: null, permanent: true });
    expect(r.ok === false && failureText(r.failure)).toMatch(
      /^refused by the webhook policy — Not sent: The webhook URL must use https/,
    );
    expect(seen).toEqual([]);
  });

  it("classes a refused connection and a name that does not resolve by their codes", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = await attempt(`http://127.0.0.1:${closedPort}/hook`, { text: "x" }, allow);
    expect(refused).toMatchObject({ ok: false, statusCode: null, permanent: false });
    expect(refused.ok === false && failureText(refused.failure)).toMatch(
      /^connection refused — No answer from 127\.0\.0\.1:\d+: ECONNREFUSED, /,
    );

    const nowhere: TargetPolicy = {
      allowedHosts: ["hooks.nowhere.test"],
      databases: [],
      lookup: async () => {
        throw Object.assign(new Error("getaddrinfo ENOTFOUND hooks.nowhere.test"), { code: "ENOTFOUND" });
      },
    };
    const unresolved = await attempt("https://hooks.nowhere.test/hook", { text: "x" }, nowhere);
    expect(unresolved).toEqual({
      ok: false,
      statusCode: null,
      failure: {
        errorClass: "DNS: name not found",
        detail: "Not sent: The webhook host hooks.nowhere.test could not be resolved (ENOTFOUND).",
      },
      permanent: false,
    });
  });
});
