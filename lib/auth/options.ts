import "server-only";
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { credentialsSchema } from "@/lib/auth/credentials";
import { recordAudit } from "@/lib/audit";
import { getUserById, verifyCredentials, touchSignIn } from "@/lib/auth/users";
import { isRole } from "@/lib/auth/permissions";

/** Header lookup that works for both plain objects and Headers (next-auth passes either). */
function headerOf(headers: unknown, name: string): string | null {
  if (!headers) return null;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  const v = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
}

function clientIp(headers: unknown): string | null {
  const fwd = headerOf(headers, "x-forwarded-for");
  return fwd ? fwd.split(",")[0]!.trim() : headerOf(headers, "x-real-ip");
}

const SESSION_MAX_AGE_S = Number(process.env.DLQ_SESSION_MAX_AGE_SECONDS ?? 12 * 60 * 60);

export const authOptions: NextAuthOptions = {
  // JWT sessions: the credentials provider requires them. The token only names the user; the role
  // is read from the database on every request (lib/auth/session.ts), so a role change or a
  // disabled account takes effect at once.
  session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_S },
  pages: { signIn: "/signin" },
  providers: [
    CredentialsProvider({
      name: "Email and password",
      credentials: {
        email: { label: "Email", type: "email" },
        password: { label: "Password", type: "password" },
      },
      async authorize(raw, req) {
        const meta = { requestId: headerOf(req?.headers, "x-request-id"), ip: clientIp(req?.headers) };
        const parsed = credentialsSchema.safeParse(raw ?? {});
        const email = parsed.success ? parsed.data.email : typeof raw?.email === "string" ? raw.email.slice(0, 320) : null;
        const user = parsed.success ? await verifyCredentials(parsed.data.email, parsed.data.password) : null;
        if (!user) {
          await recordAudit({
            actor: { id: null, email, role: null },
            action: "auth.sign_in_failed",
            outcome: "failure",
            requestId: meta.requestId,
            ip: meta.ip,
            details: { method: "credentials" },
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
          details: { method: "credentials" },
        });
        return { id: user.id, email: user.email, name: user.name ?? null };
      },
    }),
  ],
  callbacks: {
    async jwt({ token, user }) {
      if (user) token.sub = user.id;
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
      const user = token?.sub ? await getUserById(token.sub) : null;
      await recordAudit({
        actor: { id: token?.sub ?? null, email: user?.email ?? (token?.email as string | undefined) ?? null, role: user && isRole(user.role) ? user.role : null },
        action: "auth.sign_out",
        outcome: "success",
      });
    },
  },
  secret: process.env.NEXTAUTH_SECRET,
};
