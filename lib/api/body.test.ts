import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isAppError } from "@/lib/errors";
import { MAX_BODY_BYTES, parseBody } from "./body";

const schema = z.object({ queue: z.string().min(1), count: z.number().int() });

function request(body: BodyInit | null, headers: Record<string, string> = { "content-type": "application/json" }) {
  return new Request("http://127.0.0.1/api/v1/x", {
    method: "POST",
    body,
    headers,
    ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
}

async function refusal(req: Request) {
  const e = await parseBody(schema, req).then(
    () => null,
    (err: unknown) => err,
  );
  expect(isAppError(e), String(e)).toBe(true);
  return e as { code: string; userMessage: string };
}

describe("parseBody", () => {
  it("parses JSON with the operation's schema", async () => {
    expect(await parseBody(schema, request(JSON.stringify({ queue: "orders.dlq", count: 3 })))).toEqual({
      queue: "orders.dlq",
      count: 3,
    });
  });

  it("names the fields that fail the schema, never the values sent", async () => {
    const e = await refusal(request(JSON.stringify({ queue: "", count: "secret-value" })));
    expect(e.code).toBe("bad_request:body");
    expect(e.userMessage).toContain("queue");
    expect(e.userMessage).toContain("count");
    expect(e.userMessage).not.toContain("secret-value");
  });

  it("refuses a body that is not JSON, or not sent as JSON", async () => {
    expect((await refusal(request("{queue:"))).userMessage).toBe("The body is not valid JSON.");
    expect(
      (await refusal(request(JSON.stringify({ queue: "q", count: 1 }), { "content-type": "text/plain" }))).userMessage,
    ).toContain("Content-Type: application/json");
  });

  it("stops reading a body past the cap, declared or streamed without a length", async () => {
    const big = JSON.stringify({ queue: "x".repeat(MAX_BODY_BYTES), count: 1 });
    expect((await refusal(request(big))).userMessage).toContain("larger than");
    let pulled = 0;
    const chunk = new Uint8Array(16 * 1024).fill(0x20);
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(chunk);
      },
    });
    expect((await refusal(request(endless))).userMessage).toContain("larger than");
    // It stopped at the cap instead of draining an endless body.
    expect(pulled * chunk.byteLength).toBeLessThan(MAX_BODY_BYTES + 4 * chunk.byteLength);
  });
});
