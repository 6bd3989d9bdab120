import { NextResponse, type NextRequest } from "next/server";
import { contentSecurityPolicy, newNonce } from "@/lib/auth/csp";
import { moveArrivedHeaders } from "@/lib/auth/forwarded-headers";

/**
 * Tags each request with a server-made id and its path, for the audit log and for sign-in
 * redirects; moves the forwarding headers it arrived with aside, so that Next refills
 * X-Forwarded-For from the socket and lib/auth/client-ip.ts believes them only from a trusted
 * proxy (DLQ_TRUSTED_PROXIES); and gives it a fresh CSP nonce: the policy goes on the
 * request (Next reads the nonce from it and applies it to the scripts it renders) and on the
 * response. Authorization is NOT done here: every page, action and route handler checks
 * permissions on the server through lib/auth.
 */
export function proxy(request: NextRequest) {
  const headers = new Headers(request.headers);
  const requestId = crypto.randomUUID();
  moveArrivedHeaders(headers, requestId);
  const https = (process.env.NEXTAUTH_URL ?? "").startsWith("https://");
  const csp = contentSecurityPolicy(newNonce(), { https });
  headers.set("x-pathname", request.nextUrl.pathname + request.nextUrl.search);
  headers.set("content-security-policy", csp);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("x-request-id", requestId);
  response.headers.set("Content-Security-Policy", csp);
  if (https) response.headers.set("Strict-Transport-Security", "max-age=31536000");
  return response;
}

export const config = {
  matcher: ["/((?!_next/static|_next/image|favicon.ico).*)"],
};
