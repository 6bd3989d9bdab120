import { NextResponse, type NextRequest } from "next/server";

/**
 * Tags each request with an id (kept if a trusted load balancer set one) and its path, for the
 * audit log and for sign-in redirects. Authorization is NOT done here: every page, action and
 * route handler checks permissions on the server through lib/auth.
 */
export function proxy(request: NextRequest) {
  const headers = new Headers(request.headers);
  const incoming = headers.get("x-request-id");
  const requestId = incoming && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : crypto.randomUUID();
  headers.set("x-request-id", requestId);
  headers.set("x-pathname", request.nextUrl.pathname + request.nextUrl.search);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("x-request-id", requestId);
  return response;
}

export const config = {
  matcher: ["/((?!_next/static|_next/image|favicon.ico).*)"],
};
