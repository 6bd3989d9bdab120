import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/lib/db";
import { authOptions } from "./options";
import { asTheAppSeesIt } from "./forwarding-test-kit";

afterAll(() => closeDb());

type Authorize = (raw: Record<string, string>, req: { headers: Record<string, string> }) => Promise<unknown>;

/** The credentials provider's own authorize, as next-auth calls it for POST /api/auth/callback/credentials. */
function credentialsAuthorize(): Authorize {
  const p = authOptions.providers.find((x) => x.id === "credentials") as unknown as {
    options: { authorize: Authorize };
  };
  return p.options.authorize;
}

describe("sign-in limiter and audit rows behind no trusted proxy (DLQ_TRUSTED_PROXIES unset)", () => {
  it("a client that writes a new X-Forwarded-For on every try is still one address: limited after 20 failures", async () => {
    const authorize = credentialsAuthorize();
    const tag = randomBytes(4).toString("hex");
    const peer = `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    const attempt = async (i: number) => {
      const h = asTheAppSeesIt(
        { "x-forwarded-for": `10.${i}.0.1`, "x-real-ip": `10.${i}.0.2`, "x-request-id": `spoof-${tag}-${i}` },
        peer,
      );
      return authorize(
        { email: `nobody-${tag}-${i}@it.test`, password: "wrong-password" },
        { headers: Object.fromEntries(h) },
      ).then(
        (v) => ({ ok: true as const, v }),
        (e: Error) => ({ ok: false as const, message: e.message }),
      );
    };
    for (let i = 0; i < 20; i++) expect(await attempt(i)).toEqual({ ok: true, v: null });
    expect(await attempt(20)).toMatchObject({ ok: false, message: expect.stringMatching(/^RateLimited:/) });

    const tries = await getDb().signInAttempt.findMany({
      where: { email: { startsWith: `nobody-${tag}-` } },
      select: { ip: true },
    });
    expect(new Set(tries.map((t) => t.ip))).toEqual(new Set([peer]));
    const rows = await getDb().auditEvent.findMany({
      where: { actorEmail: { startsWith: `nobody-${tag}-` } },
      select: { action: true, ip: true, requestId: true, details: true },
    });
    expect(rows).toHaveLength(21);
    for (const r of rows) {
      expect(r.ip).toBe(peer);
      expect(r.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect((r.details as { clientRequestId?: string }).clientRequestId).toMatch(new RegExp(`^spoof-${tag}-\\d+$`));
    }
    expect(rows.filter((r) => r.action === "auth.sign_in_limited")).toHaveLength(1);
  });
});
