/** Test helper: request headers as the app sees them behind `next start`. Never used by the app. */
import { NextRequest } from "next/server";
import { proxy } from "@/proxy";

/**
 * A request as the app sees it under `next start` (Next 16.4, read from its source):
 * base-server.js fills X-Forwarded-For with the socket address when absent (`??=`) before the
 * proxy runs; resolve-routes.js then replaces the request headers with the proxy's
 * (`x-middleware-override-headers`: names not listed are deleted, listed ones take
 * `x-middleware-request-<name>`); base-server.js fills X-Forwarded-For (`??=`) again for the render.
 * The real proxy() of proxy.ts runs in between.
 */
export function asTheAppSeesIt(sent: Record<string, string>, socket: string): Headers {
  const node: Record<string, string | undefined> = { ...sent };
  node["x-forwarded-for"] ??= socket;
  const res = proxy(new NextRequest("http://127.0.0.1:3000/audit", { headers: node as Record<string, string> }));
  if (res instanceof Promise) throw new Error("proxy() answers a GET at once");
  const keep = new Set((res.headers.get("x-middleware-override-headers") ?? "").split(",").map((k) => k.trim()));
  for (const k of Object.keys(node)) if (!keep.has(k)) delete node[k];
  for (const k of keep) node[k] = res.headers.get(`x-middleware-request-${k}`) ?? undefined;
  node["x-forwarded-for"] ??= socket;
  return new Headers(Object.entries(node).filter((e): e is [string, string] => e[1] !== undefined));
}
