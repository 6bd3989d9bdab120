import "server-only";
import { AppError } from "@/lib/errors";

/**
 * For route handlers that change state (server actions have Next's own origin check). Cookies ride
 * along with cross-site requests, so a POST is only accepted when its Origin is the console's own:
 * NEXTAUTH_URL's origin when set (the URL users reach the console by), else this request's host.
 * A missing Origin is refused: browsers send it on every POST, and scripts can set it.
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

/** Throws `forbidden:origin` (HTTP 403) unless the request comes from the console's own pages. */
export function assertSameOrigin(req: Request): void {
  if (isSameOrigin(req)) return;
  throw new AppError("forbidden:origin", {
    message: `origin ${req.headers.get("origin") ?? "(none)"} refused for ${req.method} ${new URL(req.url).pathname}`,
    userMessage: "This request did not come from the console's own pages, so it was refused.",
  });
}
