/** Header lookup for both Headers and plain objects (next-auth passes either). */
export function headerOf(headers: unknown, name: string): string | null {
  if (!headers) return null;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  const v = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
}

/**
 * The client's address as the nearest proxy saw it: the LAST X-Forwarded-For entry. `next start`
 * fills X-Forwarded-For with the socket address only when the request has none, and a reverse proxy
 * (nginx's $proxy_add_x_forwarded_for, cloud load balancers) appends the address it saw, so the
 * last entry is the one a client cannot choose when the console sits behind such a proxy. Earlier
 * entries are whatever the client sent. Exposed directly, a client can set the header itself: the
 * per-IP sign-in limit then only binds honest clients, while the per-email limit still holds.
 */
export function clientIp(headers: unknown): string | null {
  const fwd = headerOf(headers, "x-forwarded-for");
  const last = fwd?.split(",").map((s) => s.trim()).filter(Boolean).at(-1);
  return (last ?? headerOf(headers, "x-real-ip"))?.slice(0, 100) ?? null;
}
