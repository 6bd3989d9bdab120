/**
 * Session and sign-in settings from the environment, read once per process. Invalid values fall
 * back to the defaults rather than weakening anything silently to zero.
 */
function seconds(raw: string | undefined, fallback: number, min = 1): number {
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isFinite(n) && n >= min ? Math.floor(n) : fallback;
}

export interface SessionPolicy {
  /** Absolute lifetime from sign-in (DLQ_SESSION_MAX_AGE_SECONDS, default 12 h). */
  maxAgeMs: number;
  /** Refused after this long without a request (DLQ_SESSION_IDLE_SECONDS, default 30 min). */
  idleMs: number;
  /** last-seen is written at most this often: min(60 s, idle / 10). */
  touchMs: number;
}

export function sessionPolicy(env: Record<string, string | undefined> = process.env): SessionPolicy {
  const maxAgeMs = seconds(env.DLQ_SESSION_MAX_AGE_SECONDS, 12 * 60 * 60) * 1000;
  const idleMs = seconds(env.DLQ_SESSION_IDLE_SECONDS, 30 * 60) * 1000;
  return { maxAgeMs, idleMs, touchMs: Math.max(1000, Math.min(60_000, Math.floor(idleMs / 10))) };
}

export interface SignInLimitPolicy {
  windowMs: number;
  perEmail: number;
  perIp: number;
}

/** DLQ_SIGNIN_WINDOW_SECONDS (900), DLQ_SIGNIN_MAX_FAILURES_PER_EMAIL (5), DLQ_SIGNIN_MAX_FAILURES_PER_IP (20). */
export function signInLimitPolicy(env: Record<string, string | undefined> = process.env): SignInLimitPolicy {
  return {
    windowMs: seconds(env.DLQ_SIGNIN_WINDOW_SECONDS, 15 * 60) * 1000,
    perEmail: seconds(env.DLQ_SIGNIN_MAX_FAILURES_PER_EMAIL, 5),
    perIp: seconds(env.DLQ_SIGNIN_MAX_FAILURES_PER_IP, 20),
  };
}

/** Credentials sign-in is on unless DLQ_AUTH_CREDENTIALS=off. */
export function credentialsEnabled(env: Record<string, string | undefined> = process.env): boolean {
  return !["off", "false", "0", "no"].includes((env.DLQ_AUTH_CREDENTIALS ?? "").trim().toLowerCase());
}

/** Cookies get the Secure flag (and the __Secure- prefix) when the console's URL is https. */
export function secureCookies(env: Record<string, string | undefined> = process.env): boolean {
  return (env.NEXTAUTH_URL ?? "").startsWith("https://");
}

export function sessionCookieName(env: Record<string, string | undefined> = process.env): string {
  return `${secureCookies(env) ? "__Secure-" : ""}next-auth.session-token`;
}
