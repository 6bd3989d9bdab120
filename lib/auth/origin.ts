import "server-only";
import { AppError } from "@/lib/errors";

/**
 * For every request that changes state: route handlers (assertSameOrigin) and server actions
 * (proxy.ts, before Next runs them). Cookies ride along with cross-site requests, so a POST is only
 * accepted when its Origin is the console's own: NEXTAUTH_URL's origin when set (the URL users
 * reach the console by), else this request's host. A missing Origin is refused: browsers send it
 * on every POST, and scripts can set it.
 */
export function isSameOrigin(req: Request, env: Record<string, string | undefined> = process.env): boolean {
  const origin = req.headers.get("origin");
  if (!origin || origin === "null") return false;
  let got: URL;
  try {
    got = new URL(origin);
  } catch {
    return false;
  }
  if (env.NEXTAUTH_URL) {
    try {
      return got.origin === new URL(env.NEXTAUTH_URL).origin;
    } catch {
      /* a malformed NEXTAUTH_URL falls back to the host header */
    }
  }
  const host = req.headers.get("x-forwarded-host") ?? req.headers.get("host");
  return Boolean(host) && got.host === host;
}

export const ORIGIN_REFUSED_MESSAGE = "This request did not come from the console's own pages, so it was refused.";

/** Throws `forbidden:origin` (HTTP 403) unless the request comes from the console's own pages. */
export function assertSameOrigin(req: Request): void {
  if (isSameOrigin(req)) return;
  throw new AppError("forbidden:origin", {
    message: `origin ${req.headers.get("origin") ?? "(none)"} refused for ${req.method} ${new URL(req.url).pathname}`,
    userMessage: ORIGIN_REFUSED_MESSAGE,
  });
}

/** Why a request's Origin is not the console's own (none, the opaque `null`, another site's), or null when it is. */
export type OriginRefusal = "missing" | "null" | "foreign";

export function originRefusal(
  req: Request,
  env: Record<string, string | undefined> = process.env,
): OriginRefusal | null {
  const origin = req.headers.get("origin");
  if (!origin) return "missing";
  if (origin === "null") return "null";
  return isSameOrigin(req, env) ? null : "foreign";
}

/**
 * A request Next may run as a server action: any POST carrying a `Next-Action` header (how the
 * client router calls one), and any POST to a page (a form's action posts to the page itself, with
 * the action's id in the body). Next checks such a request's Origin only when it has one, and
 * answers a foreign one with HTTP 500; proxy.ts answers a missing, `null` or foreign one with 403.
 */
export function mayRunServerAction(req: Request, pathname: string): boolean {
  if (req.method !== "POST") return false;
  return req.headers.has("next-action") || !isApiPath(pathname);
}

const CHANGING_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * A state change a browser session may make through a route handler: any POST, PUT, PATCH or
 * DELETE under /api/, except /api/v1/ (bearer tokens only: it never reads a cookie, so a forged
 * request has nothing to ride on) and /api/auth/ (Auth.js checks its own CSRF token on sign-in and
 * sign-out; an identity provider's form_post callback comes from the provider's origin by design;
 * CSP reports carry no session).
 */
export function isSessionRouteChange(req: Request, pathname: string): boolean {
  if (!CHANGING_METHODS.has(req.method) || !isApiPath(pathname)) return false;
  return !(isUnder(pathname, "/api/v1") || isUnder(pathname, "/api/auth"));
}

/**
 * Every request proxy.ts refuses, audited, unless it comes from the console's own pages: server
 * actions and cookie-session route handlers' state changes. Route handlers keep their own
 * assertSameOrigin as a second line.
 */
export function mustComeFromConsole(req: Request, pathname: string): boolean {
  return mayRunServerAction(req, pathname) || isSessionRouteChange(req, pathname);
}

const isUnder = (pathname: string, prefix: string) => pathname === prefix || pathname.startsWith(`${prefix}/`);
const isApiPath = (pathname: string) => isUnder(pathname, "/api");
