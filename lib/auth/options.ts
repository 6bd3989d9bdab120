import "server-only";
import type { NextAuthOptions } from "next-auth";
import type { Provider } from "next-auth/providers/index";
import CredentialsProvider from "next-auth/providers/credentials";
import { credentialsSchema } from "@/lib/auth/credentials";
import { recordAudit } from "@/lib/audit";
import { getUserById, verifyCredentials, touchSignIn } from "@/lib/auth/users";
import { isRole } from "@/lib/auth/permissions";
import { clientIdentity } from "@/lib/auth/client-ip";
import { credentialsEnabled, sessionCookieName, sessionPolicy, secureCookies } from "@/lib/auth/config";
import { beginSignInAttempt, finishSignInAttempt, retryMinutes } from "@/lib/auth/rate-limit";
import { createSession, endSession } from "@/lib/auth/sessions";
import { oidcConfig, type OidcConfig } from "@/lib/auth/oidc";
import { signInOidcUser } from "@/lib/auth/oidc-users";

import { RATE_LIMITED_ERROR } from "@/lib/auth/sign-in-errors";

const credentials = CredentialsProvider({
  name: "Email and password",
  credentials: {
    email: { label: "Email", type: "email" },
    password: { label: "Password", type: "password" },
  },
  async authorize(raw, req) {
    // The same address as every audit row: the peer, or what a trusted proxy says (lib/auth/client-ip.ts).
    const meta = clientIdentity(req?.headers);
    const client = meta.clientRequestId ? { clientRequestId: meta.clientRequestId } : {};
    const parsed = credentialsSchema.safeParse(raw ?? {});
    const email = parsed.success
      ? parsed.data.email
      : typeof raw?.email === "string"
        ? raw.email.trim().toLowerCase().slice(0, 320) || null
        : null;
    // Decided before the password is looked at: a limited attempt costs no scrypt and learns nothing.
    const attempt = await beginSignInAttempt({ email, ip: meta.ip });
    if (attempt.decision.limited) {
      await recordAudit({
        actor: { id: null, email, role: null },
        action: "auth.sign_in_limited",
        outcome: "denied",
        requestId: meta.requestId,
        ip: meta.ip,
        details: {
          method: "credentials",
          scope: attempt.decision.scope,
          retryAfterSeconds: Math.ceil(attempt.decision.retryAfterMs / 1000),
          ...client,
        },
      });
      throw new Error(`${RATE_LIMITED_ERROR}:${retryMinutes(attempt.decision.retryAfterMs)}`);
    }
    const user = parsed.success ? await verifyCredentials(parsed.data.email, parsed.data.password) : null;
    await finishSignInAttempt(attempt.id, user ? "success" : "failure");
    if (!user) {
      await recordAudit({
        actor: { id: null, email, role: null },
        action: "auth.sign_in_failed",
        outcome: "failure",
        requestId: meta.requestId,
        ip: meta.ip,
        details: { method: "credentials", ...client },
      });
      return null;
    }
    await touchSignIn(user.id);
    await recordAudit({
      actor: { id: user.id, email: user.email, role: user.role },
      action: "auth.sign_in",
      outcome: "success",
      requestId: meta.requestId,
      ip: meta.ip,
      details: { method: "credentials", ...client },
    });
    return { id: user.id, email: user.email, name: user.name ?? null, signInIp: meta.ip };
  },
});

/** next-auth's generic OAuth provider in OIDC mode: discovery, PKCE + state + nonce, id_token claims. */
function oidcProvider(cfg: OidcConfig): Provider {
  return {
    id: "oidc",
    name: cfg.name,
    type: "oauth",
    wellKnown: `${cfg.issuer}/.well-known/openid-configuration`,
    clientId: cfg.clientId,
    clientSecret: cfg.clientSecret,
    authorization: { params: { scope: cfg.scope } },
    idToken: true,
    checks: ["pkce", "state", "nonce"],
    // Replaced by the console user's id in the signIn callback.
    profile: (p: Record<string, unknown>) => ({
      id: String(p.sub),
      email: typeof p.email === "string" ? p.email : null,
      name: typeof p.name === "string" ? p.name : null,
    }),
  };
}

const OIDC = oidcConfig();
const SESSION = sessionPolicy();
const SECURE = secureCookies();

/** What the sign-in page offers. */
export function signInMethods(): { credentials: boolean; oidc: { id: string; name: string } | null } {
  return { credentials: credentialsEnabled(), oidc: OIDC ? { id: "oidc", name: OIDC.name } : null };
}

export const authOptions: NextAuthOptions = {
  // JWT sessions (the credentials provider requires them). The token names the user and a session
  // row (`sid`); getActor (lib/auth/session.ts) checks that row and reads the user from the database
  // on every request, so sign-out, idle timeout, expiry, role changes and disabling take effect at once.
  session: { strategy: "jwt", maxAge: Math.floor(SESSION.maxAgeMs / 1000) },
  useSecureCookies: SECURE,
  cookies: {
    sessionToken: {
      name: sessionCookieName(),
      // Lax, not Strict: the OIDC callback arrives as a cross-site redirect chain, after which a
      // Strict cookie would be withheld from the first page. Lax still withholds it from cross-site
      // POSTs and subresources; state-changing requests also check Origin.
      options: { httpOnly: true, sameSite: "lax", path: "/", secure: SECURE },
    },
  },
  pages: { signIn: "/signin", error: "/signin" },
  providers: [...(credentialsEnabled() ? [credentials] : []), ...(OIDC ? [oidcProvider(OIDC)] : [])],
  callbacks: {
    async signIn({ user, account, profile }) {
      if (account?.provider !== "oidc") return true;
      if (!OIDC || !profile) return false;
      const result = await signInOidcUser(profile as Record<string, unknown>, OIDC);
      if (!result.ok) return `/signin?error=${result.reason === "no_role" ? "NoRole" : "AccessDenied"}`;
      // Without an adapter next-auth hands this same object to the jwt callback.
      user.id = result.userId;
      return true;
    },
    async jwt({ token, user, account }) {
      if (user) {
        token.sub = user.id;
        const ip = (user as { signInIp?: string | null }).signInIp ?? null;
        token.sid = await createSession({
          userId: user.id,
          method: account?.provider === "oidc" ? "oidc" : "credentials",
          ip,
        });
      }
      return token;
    },
    async session({ session, token }) {
      // Exposes only the id; the UI asks the server for anything role-dependent.
      if (session.user) (session.user as { id?: string }).id = token.sub;
      return session;
    },
  },
  events: {
    async signOut({ token }) {
      if (typeof token?.sid === "string") await endSession(token.sid, "sign_out");
      const user = token?.sub ? await getUserById(token.sub) : null;
      await recordAudit({
        actor: {
          id: token?.sub ?? null,
          email: user?.email ?? (token?.email as string | undefined) ?? null,
          role: user && isRole(user.role) ? user.role : null,
        },
        action: "auth.sign_out",
        outcome: "success",
      });
    },
  },
  secret: process.env.NEXTAUTH_SECRET,
};
