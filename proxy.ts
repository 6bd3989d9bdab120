import { NextResponse, type NextRequest } from "next/server";
import { contentSecurityPolicy, newNonce } from "@/lib/auth/csp";
import { moveArrivedHeaders } from "@/lib/auth/forwarded-headers";
import { mustComeFromConsole, type OriginRefusal, originRefusal } from "@/lib/auth/origin";

/**
 * Tags each request with a server-made id and its path, for the audit log and for sign-in
 * redirects; moves the forwarding headers it arrived with aside, so that Next refills
 * X-Forwarded-For from the socket and lib/auth/client-ip.ts believes them only from a trusted
 * proxy (DLQ_TRUSTED_PROXIES); and gives it a fresh CSP nonce: the policy goes on the
 * request (Next reads the nonce from it and applies it to the scripts it renders) and on the
 * response. Authorization is NOT done here: every page, action and route handler checks
 * permissions on the server through lib/auth.
 *
 * One refusal is made here, because nothing later can make it for server actions: a server action,
 * or a state change through a cookie-session route handler, without the console's own Origin
 * (none, `null`, another site's) is answered 403 and audited before Next runs it (Next itself runs
 * an action with no Origin and answers a foreign one with HTTP 500).
 */
export function proxy(request: NextRequest): NextResponse | Promise<NextResponse> {
  const headers = new Headers(request.headers);
  const requestId = crypto.randomUUID();
  moveArrivedHeaders(headers, requestId);
  const https = (process.env.NEXTAUTH_URL ?? "").startsWith("https://");
  const csp = contentSecurityPolicy(newNonce(), { https });
  const finish = (response: NextResponse) => {
    response.headers.set("x-request-id", requestId);
    response.headers.set("Content-Security-Policy", csp);
    if (https) response.headers.set("Strict-Transport-Security", "max-age=31536000");
    return response;
  };
  const refusal = mustComeFromConsole(request, request.nextUrl.pathname) ? originRefusal(request) : null;
  if (refusal) return refuse(request, headers, refusal).then(finish);
  headers.set("x-pathname", request.nextUrl.pathname + request.nextUrl.search);
  headers.set("content-security-policy", csp);
  return finish(NextResponse.next({ request: { headers } }));
}

/**
 * The refused action's answer (lib/auth/origin-refusal.ts, loaded only when one is refused). The
 * audit row's address follows lib/auth/client-ip.ts with X-Forwarded-For as it reached this proxy:
 * Next fills it with the socket's address only when the request brought none, so where the
 * console is reached directly a client that writes its own is recorded at the address it wrote.
 */
async function refuse(request: NextRequest, moved: Headers, reason: OriginRefusal) {
  const [{ refuseForeignRequest }, { clientIdentity }, { sessionCookieName }] = await Promise.all([
    import("@/lib/auth/origin-refusal"),
    import("@/lib/auth/client-ip"),
    import("@/lib/auth/config"),
  ]);
  const seen = new Headers(moved);
  const forwardedFor = request.headers.get("x-forwarded-for");
  if (forwardedFor) seen.set("x-forwarded-for", forwardedFor);
  return refuseForeignRequest(reason, {
    pathname: request.nextUrl.pathname,
    origin: request.headers.get("origin"),
    method: request.method,
    actionId: request.headers.get("next-action"),
    sessionCookie: request.cookies.get(sessionCookieName())?.value,
    client: clientIdentity(seen),
  });
}

export const config = {
  matcher: ["/((?!_next/static|_next/image|favicon.ico).*)"],
};
