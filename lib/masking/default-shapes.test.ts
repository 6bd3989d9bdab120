import { describe, expect, it } from "vitest";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import {
  HOSTILE,
  HOSTILE_EXCEPTION,
  HOSTILE_JSON,
  HOSTILE_SECRET,
  HOSTILE_SVG,
  HOSTILE_TEXT,
} from "@/lib/demo/hostile-corpus";
import { DEFAULT_MASKING_RULES } from "./defaults";
import { detect } from "./detectors";
import { applyAction, maskHeaderRecord, maskHeaders, maskPayload, maskText } from "./engine";
import type { MaskingRule } from "./types";

/**
 * The shapes secrets travel in besides JSON fields (XML, form bodies, header
 * dumps, long values, JSON inside JSON strings), masked by the default rules without a character
 * of the secret in the output, keeping the payload's shape.
 */

const KEY = "test-key";
const enc = (s: string) => new TextEncoder().encode(s);
const ctx = (rules: MaskingRule[] = DEFAULT_MASKING_RULES) => ({ rules, role: "viewer" as const, hashKey: KEY });
const payload = (text: string, contentType: string | null = null, opts?: { truncated?: boolean }) =>
  maskPayload(enc(text), contentType, ctx(), opts);
const shown = (text: string, contentType: string | null = null, opts?: { truncated?: boolean }) =>
  payload(text, contentType, opts).text ?? "";
const headerValue = (r: { entries: HeaderEntry[] }, name: string) => {
  const v = r.entries.find((e) => e.name === name)!.value;
  return v.t === "string" ? v.v : JSON.stringify(v);
};

const SECRET = "hunter2-Zq9";
const BASIC = "dXNlcjpodW50ZXIyLVpxOQ=="; // user:hunter2-Zq9
const CARD = "4111111111111111";
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlX2hlcmU";

function expectNone(text: string, ...secrets: string[]) {
  for (const s of secrets) expect(text, `shows ${s}`).not.toContain(s);
}

describe("XML", () => {
  it("hides the content of secret elements and keeps the document", () => {
    expect(shown("<password>hunter2</password>", "application/xml")).toBe("<password>[hidden]</password>");
    expect(shown('<user><apiKey attr="x">abc</apiKey><name>Ada</name></user>')).toBe(
      '<user><apiKey attr="x">[hidden]</apiKey><name>Ada</name></user>',
    );
    expect(shown(`<login><Password>${SECRET}</Password></login>`)).toBe("<login><Password>[hidden]</Password></login>");
  });

  it("CDATA, namespaces, children and same-named nesting", () => {
    expect(shown(`<password><![CDATA[${SECRET}]]></password>`)).toBe("<password>[hidden]</password>");
    expect(shown(`<ns:token xmlns:ns="urn:x">${SECRET}</ns:token>`)).toBe(
      '<ns:token xmlns:ns="urn:x">[hidden]</ns:token>',
    );
    expect(shown(`<credentials><user>bob</user><pass>${SECRET}</pass></credentials><next>1</next>`)).toBe(
      "<credentials>[hidden]</credentials><next>1</next>",
    );
    expect(shown(`<token><token>a</token>${SECRET}</token><after/>`)).toBe("<token>[hidden]</token><after/>");
    // An end tag inside CDATA or a comment does not end the element.
    const cdata = `<secret><![CDATA[a</secret>${SECRET}]]></secret>ok`;
    expect(shown(cdata)).toBe("<secret>[hidden]</secret>ok");
    expect(shown(`<secret><!-- </secret> -->${SECRET}</secret>ok`)).toBe("<secret>[hidden]</secret>ok");
  });

  it("secret attributes, quoted either way or bare, at any length", () => {
    expect(shown(`<user name="ada" password="${SECRET}" token='${SECRET}'/>`)).toBe(
      `<user name="ada" password="[hidden]" token='[hidden]'/>`,
    );
    expect(shown(`<conn password=${SECRET} host=db>x</conn>`)).toBe("<conn password=[hidden] host=db>x</conn>");
    const long = `${"p".repeat(1000)}TAIL`;
    expect(shown(`<user password="${long}"/>`)).toBe('<user password="[hidden]"/>');
  });

  it("a SOAP WS-Security header and card numbers in ordinary elements", () => {
    const soap = `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header><wsse:Security><wsse:UsernameToken><wsse:Username>bob</wsse:Username><wsse:Password Type="#PasswordText">${SECRET}</wsse:Password></wsse:UsernameToken></wsse:Security></soap:Header><soap:Body><pay><pan>${CARD}</pan><amount>12</amount></pay></soap:Body></soap:Envelope>`;
    const out = shown(soap, "text/xml");
    expectNone(out, SECRET, CARD, "bob");
    expect(out).toContain("<wsse:UsernameToken>[hidden]</wsse:UsernameToken>");
    expect(out).toContain("<pan>****1111</pan><amount>12</amount>");
    expect(out.startsWith('<?xml version="1.0"?><soap:Envelope')).toBe(true);
  });

  it("markup quoted in comments and CDATA of other elements is scanned too", () => {
    expect(shown(`<note><![CDATA[<password>${SECRET}</password>]]></note>`)).toBe(
      "<note><![CDATA[<password>[hidden]</password>]]></note>",
    );
    expect(shown(`<!-- <password>${SECRET}</password> -->`)).toBe("<!-- <password>[hidden]</password> -->");
  });

  it("XML escaped inside XML or HTML (&lt;password&gt;…) is masked in place", () => {
    const inner = `<login><user>ada</user><password>${SECRET}</password></login>`;
    const escaped = inner.replace(/</g, "&lt;").replace(/>/g, "&gt;");
    expect(shown(`<envelope><payload>${escaped}</payload></envelope>`)).toBe(
      "<envelope><payload>&lt;login&gt;&lt;user&gt;ada&lt;/user&gt;&lt;password&gt;[hidden]&lt;/password&gt;&lt;/login&gt;</payload></envelope>",
    );
    expect(shown(`&lt;user password=&quot;${SECRET}&quot; pass=&#39;${SECRET}&#39;/&gt;`)).toBe(
      "&lt;user password=&quot;[hidden]&quot; pass=&#39;[hidden]&#39;/&gt;",
    );
  });

  it("a secret element that never ends (a cut payload) is hidden to the end", () => {
    const r = payload(`<login><password>${SECRET}`, "application/xml", { truncated: true });
    expect(r.text).toBe("<login><password>[hidden]");
    expect(shown(`<login><password><![CDATA[${SECRET}`)).toBe("<login><password>[hidden]");
    expect(shown("<login><password/><user>ada</user></login>")).toBe("<login><password/><user>ada</user></login>");
  });
});

describe("form-encoded bodies", () => {
  it("masks fields by name and cards by the last-4 rule", () => {
    expect(shown("user=a&password=hunter2&card=4111111111111111", "application/x-www-form-urlencoded")).toBe(
      "user=a&password=[hidden]&card=****1111",
    );
    expect(shown(`grant_type=password&username=ada&client_secret=${SECRET}&refresh_token=${SECRET}`)).toBe(
      "grant_type=password&username=ada&client_secret=[hidden]&refresh_token=[hidden]",
    );
  });

  it("percent-encoded values and keys are decoded before they are judged", () => {
    const out = shown(
      `user=a&password=hun%26ter2%3D%3D&card=4111%201111%201111%201111&card2=4111+1111+1111+1111&email=ada%40example.com`,
    );
    expectNone(out, "hun", "ter2", "4111%201111", "4111+1111", "ada%40example.com", "ada@example.com");
    expect(out).toBe(
      `user=a&password=[hidden]&card=****1111&card2=****1111&email=${applyAction("ada@example.com", { kind: "hash" }, KEY)}`,
    );
    expect(shown(`user%5Bname%5D=ada&user%5Bpassword%5D=${SECRET}&user[pin]=1234`)).toBe(
      "user%5Bname%5D=ada&user%5Bpassword%5D=[hidden]&user[pin]=[hidden]",
    );
  });

  it("JSON and text inside an encoded value are masked, the rest of the value stays encoded", () => {
    const data = encodeURIComponent(JSON.stringify({ password: SECRET, note: `pay with ${CARD}` }));
    const out = shown(`id=7&data=${data}`);
    expectNone(out, SECRET, CARD, "4111");
    expect(out.startsWith("id=7&data=%7B%22password%22")).toBe(true);
    expect(decodeURIComponent(out.slice("id=7&data=".length).replace(/\+/g, " "))).toBe(
      '{"password":"[hidden]","note":"pay with ****1111"}',
    );
  });

  it("a value with a secret read either way (`+` as plus or as space) is hidden whole", () => {
    expect(maskText("note=ada+test@example.com&x=1", ctx()).text).toBe("note=[hidden]&x=1");
  });

  it("a decoded value that cannot be encoded again is hidden whole", () => {
    const r = payload('{"q":"card=4111%201111%201111%201111\\ud800"}', "application/json");
    expect(JSON.parse(r.text!)).toEqual({ q: "card=[hidden]" });
  });

  it("dotted and bracketed names in properties and logs", () => {
    expect(maskText(`spring.datasource.password=${SECRET} spring.datasource.url=jdbc:x`, ctx()).text).toBe(
      "spring.datasource.password=[hidden] spring.datasource.url=jdbc:x",
    );
    expect(maskText(`User{name=ada, apiKey=${SECRET}, passwordHash=${SECRET}}`, ctx()).text).toBe(
      "User{name=ada, apiKey=[hidden], passwordHash=[hidden]}",
    );
    // A bare value ends at a space or , ; & and brackets only: a closing parenthesis may be part of a secret.
    expect(maskText(`User(name=ada, password=${SECRET})`, ctx()).text).toBe("User(name=ada, password=[hidden]");
  });
});

describe("HTTP header dumps in text", () => {
  const dump = [
    "POST /v1/charge HTTP/1.1",
    "Host: api.example.com",
    `Authorization: Basic ${BASIC}`,
    `Proxy-Authorization: Bearer ${SECRET}abcdefgh`,
    `Cookie: session=${SECRET}; theme=dark`,
    `X-Api-Key: ${SECRET}`,
    `X-Auth-Token: ${SECRET}`,
    "Content-Type: application/json",
    "",
    '{"amount":12}',
  ].join("\r\n");

  it("hides every credential header's whole value and keeps the others", () => {
    const out = shown(dump, "text/plain");
    expectNone(out, SECRET, BASIC, "session=");
    expect(out).toBe(
      [
        "POST /v1/charge HTTP/1.1",
        "Host: api.example.com",
        "Authorization: [hidden]",
        "Proxy-Authorization: [hidden]",
        "Cookie: [hidden]",
        "X-Api-Key: [hidden]",
        "X-Auth-Token: [hidden]",
        "Content-Type: application/json",
        "",
        '{"amount":12}',
      ].join("\r\n"),
    );
  });

  it("curl -v output, Set-Cookie and folded lines", () => {
    const curl = `> GET / HTTP/1.1\n> Authorization: Bearer ${JWT}\n< HTTP/1.1 200 OK\n< Set-Cookie: sid=${SECRET}; Path=/; HttpOnly\n< Content-Length: 2`;
    const out = maskText(curl, ctx()).text;
    expectNone(out, SECRET, JWT);
    expect(out).toBe(
      "> GET / HTTP/1.1\n> Authorization: [hidden]\n< HTTP/1.1 200 OK\n< Set-Cookie: [hidden]\n< Content-Length: 2",
    );
    expect(maskText(`Cookie: a=1;\n b=${SECRET}\nHost: x`, ctx()).text).toBe("Cookie: [hidden]\nHost: x");
  });

  it("a dump held in a JSON string, parsed or cut", () => {
    const body = JSON.stringify({ request: dump, status: 502 });
    const parsed = payload(body, "application/json");
    expect(parsed.kind).toBe("json");
    expectNone(parsed.text!, SECRET, BASIC);
    expect(JSON.parse(parsed.text!).request).toContain("\r\nCookie: [hidden]\r\n");
    const cut = payload(body.slice(0, -5), "application/json", { truncated: true });
    expect(cut.kind).toBe("text");
    expectNone(cut.text!, SECRET, BASIC);
    expect(cut.text).toContain("\\r\\nCookie: [hidden]\\r\\nX-Api-Key: [hidden]\\r\\n");
  });

  it("Basic credentials anywhere in text are recognised by decoding them", () => {
    expect(maskText(`upstream said: Authorization=Basic ${BASIC} was refused`, ctx()).text).toBe(
      "upstream said: Authorization=Basic [hidden] was refused",
    );
    expect(maskText(`calling with Basic ${BASIC} failed`, ctx()).text).toBe("calling with Basic [hidden] failed");
    expect(detect("bearer", "Basic authentication failed for the Basic plan")).toEqual([]);
    expect(detect("bearer", `Negotiate TlRMTVNTUAABAAAAB4IIogAAAAAAAAAA`)).toMatchObject([{ keepPrefix: 10 }]);
  });

  it("exception lines that look like headers are left alone", () => {
    for (const line of [
      "TokenExpiredError: jwt expired",
      "com.acme.auth.InvalidTokenException: signature rejected by issuer",
      "Unexpected token O in JSON at position 0",
    ]) {
      expect(maskText(line, ctx()).text).toBe(line);
    }
  });
});

describe("long values", () => {
  const long = `${"x".repeat(450)}TAILTAIL`;

  it("hides the whole value, however long, in every shape", () => {
    const cases = [
      `password="${long}"`,
      `password='${long}'`,
      `password=${long}`,
      `password: ${long}`,
      `{"password": "${long}", "user": "ada"`,
      `{"password": ${"1".repeat(450)}9999, "user": "ada"`,
      `<password>${long}</password>`,
      `<user token="${long}"/>`,
      `Authorization: Basic ${long}`,
      `token=Bearer ${long}`,
    ];
    for (const text of cases) {
      const out = maskText(text, ctx()).text;
      expect(out, text.slice(0, 30)).not.toContain("TAIL");
      expect(out, text.slice(0, 30)).not.toContain("9999");
      expect(out, text.slice(0, 30)).not.toContain("xxx");
      expect(out, text.slice(0, 30)).toContain("[hidden]");
    }
  });

  it("a quoted value over several lines (a PEM key) and a JSON value that is an object", () => {
    const pem =
      "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----";
    expect(maskText(`private_key="${pem}" region=eu`, ctx()).text).toBe('private_key="[hidden]" region=eu');
    const cut = `{"user":"ada","secret":{"k":"${SECRET}","n":[1,{"m":"x"}]},"next":1,"cut`;
    expect(payload(cut, "application/json", { truncated: true }).text).toBe(
      '{"user":"ada","secret":[hidden],"next":1,"cut',
    );
  });
});

describe("JSON inside JSON strings", () => {
  it("once, twice and three times nested, masked as JSON", () => {
    const once = { body: JSON.stringify({ password: SECRET, user: "ada" }) };
    const twice = { body: JSON.stringify({ inner: JSON.stringify({ password: SECRET, card: CARD }) }) };
    const thrice = { a: JSON.stringify({ b: JSON.stringify({ c: JSON.stringify({ apiKey: SECRET }) }) }) };
    for (const v of [once, twice, thrice]) {
      const r = payload(JSON.stringify(v), "application/json");
      expect(r.kind).toBe("json");
      expectNone(r.text!, SECRET, CARD);
    }
    expect(JSON.parse(payload(JSON.stringify(once), null).text!)).toEqual({
      body: '{"password":"[hidden]","user":"ada"}',
    });
    const t = JSON.parse(payload(JSON.stringify(twice), null).text!);
    expect(JSON.parse(JSON.parse(t.body).inner)).toEqual({ password: "[hidden]", card: "****1111" });
    // A rule on a path runs on into the embedded document.
    const byPath = maskPayload(
      enc(JSON.stringify(once)),
      null,
      ctx([
        {
          id: "p",
          description: "",
          enabled: true,
          target: { kind: "field", paths: ["$.body.user"] },
          action: { kind: "hide" },
          roles: ["viewer"],
        },
      ]),
      {},
    );
    expect(JSON.parse(byPath.text!)).toEqual({ body: `{"password":"${SECRET}","user":"[hidden]"}` });
  });

  it("a string that holds nothing to mask is kept exactly (no re-serialisation)", () => {
    const body = '{ "a" : 1,\n "b": [true] }';
    expect(JSON.parse(payload(JSON.stringify({ body }), null).text!).body).toBe(body);
  });

  it("nested JSON seen as text (a cut prefix, a header) is masked at every escaping depth", () => {
    const twice = JSON.stringify({
      body: JSON.stringify({ inner: JSON.stringify({ password: SECRET, n: 1 }) }),
      tail: "x".repeat(40),
    });
    const cut = payload(twice.slice(0, -20), "application/json", { truncated: true });
    expect(cut.kind).toBe("text");
    expectNone(cut.text!, SECRET);
    expect(cut.text).toContain('\\\\\\"password\\\\\\":\\\\\\"[hidden]\\\\\\",\\\\\\"n\\\\\\":1');
    const h = maskHeaders(
      [
        {
          name: "x-original-body",
          value: { t: "string", v: JSON.stringify({ inner: JSON.stringify({ token: SECRET }) }) },
        },
      ],
      ctx(),
    );
    expectNone(headerValue(h, "x-original-body"), SECRET);
    expect(headerValue(h, "x-original-body")).toBe('{"inner":"{\\"token\\":\\"[hidden]\\"}"}');
  });
});

describe("message headers and attributes", () => {
  it("credentials in header values are hidden whatever the header's name", () => {
    const entries: HeaderEntry[] = [
      { name: "x-forwarded-authorization", value: { t: "string", v: `Basic ${BASIC}` } },
      { name: "x-upstream-auth", value: { t: "string", v: `Basic ${BASIC}` } },
      { name: "x-request-dump", value: { t: "string", v: `GET / HTTP/1.1\nCookie: sid=${SECRET}\nAccept: */*` } },
      { name: "x-body", value: { t: "bytes", v: "", size: 40, text: `<login><password>${SECRET}</password></login>` } },
      { name: "x-form", value: { t: "string", v: `user=ada&password=${SECRET}` } },
      { name: "x-plain", value: { t: "string", v: "Basic plan" } },
    ];
    const r = maskHeaders(entries, ctx());
    expectNone(JSON.stringify(r.entries), SECRET, BASIC);
    expect(headerValue(r, "x-forwarded-authorization")).toBe("[hidden]");
    expect(headerValue(r, "x-upstream-auth")).toBe("Basic [hidden]");
    expect(headerValue(r, "x-request-dump")).toBe("GET / HTTP/1.1\nCookie: [hidden]\nAccept: */*");
    expect(headerValue(r, "x-body")).toBe("<login><password>[hidden]</password></login>");
    expect(headerValue(r, "x-form")).toBe("user=ada&password=[hidden]");
    expect(r.entries[5]).toBe(entries[5]);
  });

  it("the triage index's flat header map", () => {
    const r = maskHeaderRecord(
      { "x-upstream-auth": `Basic ${BASIC}`, "x-raw": `Authorization: Basic ${BASIC}` },
      DEFAULT_MASKING_RULES,
      KEY,
    );
    expect(r.headers).toEqual({ "x-upstream-auth": "Basic [hidden]", "x-raw": "Authorization: [hidden]" });
  });
});

describe("what stays as it was", () => {
  it("the hostile corpus the e2e suite expects to see literally", () => {
    const text = shown(HOSTILE_TEXT, "text/plain");
    for (const v of Object.values(HOSTILE)) expect(text).toContain(v);
    expect(shown(HOSTILE_SVG, "image/svg+xml")).toBe(HOSTILE_SVG);
    expect(maskText(HOSTILE_EXCEPTION.message, ctx()).text).toBe(HOSTILE_EXCEPTION.message);
    const json = shown(HOSTILE_JSON, "application/json");
    expect(json).not.toContain(HOSTILE_SECRET);
    expect(json).toContain("<script>alert('hostile-json')</script>");
  });

  it("ordinary text, markup and key=value pairs without secrets", () => {
    for (const line of [
      "ORDER 5004 qty=2 sku=AB-12 (plain text)",
      "checkout v1 is retired <script>window.__pwned=1</script>",
      '<order id="7"><sku>AB-12</sku><qty>2</qty></order>',
      "Read timed out after 3000 ms calling payments-api",
      "Host: api.example.com\nAccept: */*",
      "a < b and c > d; x=1&y=2",
    ]) {
      expect(maskText(line, ctx()).text).toBe(line);
    }
  });
});
