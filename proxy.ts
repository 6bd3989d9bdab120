import { NextResponse, type NextRequest } from "next/server";
import { contentSecurityPolicy, newNonce } from "@/lib/auth/csp";

/**
 * Tags each request with an id (kept if a trusted load balancer set one) and its path, for the
 * audit log and for sign-in redirects, and gives it a fresh CSP nonce: the policy goes on the
 * request (Next reads the nonce from it and applies it to the scripts it renders) and on the
 * response. Authorization is NOT done here: every page, action and route handler checks
 * permissions on the server through lib/auth.
 */
export function proxy(request: NextRequest) {
  const headers = new Headers(request.headers);
  const incoming = headers.get("x-request-id");
  const requestId = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : crypto.randomUUID();
  const https = (process.env.NEXTAUTH_URL ?? "").startsWith("https://");
  const csp = contentSecurityPolicy(newNonce(), { https });
  headers.set("x-request-id", requestId);
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
