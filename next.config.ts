import type { NextConfig } from "next";

// On every response, static files included. The Content-Security-Policy needs a per-request nonce,
// so proxy.ts sets it (lib/auth/csp.ts); static files carry no markup and need none.
const securityHeaders = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "no-referrer" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  { key: "Cross-Origin-Resource-Policy", value: "same-origin" },
  // The console needs none of these device and capture features, so no page (nor anything
  // injected into one) may ask for them. Only features browsers know are named: Chromium logs a
  // warning on every page for one it does not (it has no "bluetooth" feature; Web Bluetooth
  // always asks the user through its own device chooser).
  {
    key: "Permissions-Policy",
    value:
      "camera=(), microphone=(), geolocation=(), payment=(), usb=(), serial=(), hid=(), midi=(), display-capture=()",
  },
];

const nextConfig: NextConfig = {
  // PGlite loads its data files from its package folder at run time; bundling it breaks that.
  // The broker clients keep sockets and timers that are best left as plain Node modules.
  serverExternalPackages: ["@electric-sql/pglite", "amqplib", "kafkajs", "ws"],
  // A separate build folder lets a second build (e.g. a test run beside a dev server) not clobber .next.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  poweredByHeader: false,
  // forbidden() and forbidden.tsx: a refused page answers HTTP 403 (lib/auth/authorize-page.ts).
  experimental: { authInterrupts: true },
  reactStrictMode: true,
  async headers() {
    return [{ source: "/:path*", headers: securityHeaders }];
  },
};

export default nextConfig;
