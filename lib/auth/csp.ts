/**
 * The Content-Security-Policy for one response, with that request's nonce. proxy.ts sets it on the
 * request (Next reads the nonce from it and puts it on its own scripts) and on the response.
 *
 * - Scripts: only those carrying the nonce, and what they load ('strict-dynamic'); no inline, no
 *   eval. 'self' is ignored by browsers that understand 'strict-dynamic' and kept for old ones.
 * - Styles: stylesheets from 'self' (or carrying the nonce); <style> elements need the nonce.
 *   style attributes are allowed ('style-src-attr' 'unsafe-inline'): React renders `style={...}`
 *   as attributes in the server HTML (progress bars, column widths). An attribute cannot run script
 *   and React escapes its values; the residual risk is CSS-only restyling of injected markup.
 * - Violations are reported to /api/auth/csp-report, which logs them (one line, no samples).
 */
export function contentSecurityPolicy(nonce: string, opts: { https: boolean }): string {
  const directives = [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'`,
    `style-src 'self' 'nonce-${nonce}'`,
    `style-src-elem 'self' 'nonce-${nonce}'`,
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "frame-src 'none'",
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "report-uri /api/auth/csp-report",
  ];
  if (opts.https) directives.push("upgrade-insecure-requests");
  return directives.join("; ");
}

/** 128 random bits, base64. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}
