/**
 * Names under which proxy.ts keeps the forwarding headers a request ARRIVED with, before the app
 * reads anything. No imports: proxy.ts (the Next middleware) and lib/auth/client-ip.ts share it.
 *
 * Why the move: `next start` (base-server.js) fills X-Forwarded-For with the socket's address only
 * when the request has none (`??=`), once when it runs the proxy and again when it renders. Left in
 * place, a header a client wrote hides the socket address from the app for good. Removed by the
 * proxy, it is filled again from the socket for the render, so the app sees the immediate peer in
 * X-Forwarded-For and what arrived under these names, and decides whom to believe (client-ip.ts).
 */
export const ARRIVED_FORWARDED_FOR = "x-dlq-arrived-forwarded-for";
export const ARRIVED_REAL_IP = "x-dlq-arrived-real-ip";
export const ARRIVED_REQUEST_ID = "x-dlq-arrived-request-id";

/** Longest arrived value kept; a longer one is cut (the parser then stops at the cut). */
const MAX_ARRIVED = 2048;

/**
 * Moves X-Forwarded-For, X-Real-IP and X-Request-Id to the ARRIVED_* names (a client-written
 * ARRIVED_* header is dropped first) and sets X-Request-Id to `serverRequestId`.
 */
export function moveArrivedHeaders(headers: Headers, serverRequestId: string): void {
  const moves: Array<[string, string]> = [
    ["x-forwarded-for", ARRIVED_FORWARDED_FOR],
    ["x-real-ip", ARRIVED_REAL_IP],
    ["x-request-id", ARRIVED_REQUEST_ID],
  ];
  for (const [, to] of moves) headers.delete(to);
  for (const [from, to] of moves) {
    const v = headers.get(from);
    headers.delete(from);
    if (v) headers.set(to, v.slice(0, MAX_ARRIVED));
  }
  headers.set("x-request-id", serverRequestId);
}
