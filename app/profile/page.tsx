import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { CreateTokenForm } from "@/components/tokens/create-token-form";
import { TokensTable } from "@/components/tokens/tokens-table";
import { listMyTokens, MAX_TOKEN_DAYS, rolesUpTo, TOKEN_DAY_CHOICES } from "@/lib/api-tokens";
import { authorizePage } from "@/lib/auth/authorize-page";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";

export const metadata: Metadata = { title: "Profile" };
export const dynamic = "force-dynamic";

/** The signed-in user's account and personal API tokens: create (shown once), list, revoke. */
export default async function ProfilePage() {
  const actor = await requirePageActor("/profile");
  const meta = await requestMeta();
  await authorizePage(actor, "tokens:own", { action: "token.list", meta });
  const tokens = await listMyTokens(actor, meta);
  return (
    <main className="page">
      <div className="page-head">
        <h1>Profile</h1>
        <span className="meta wrap-anywhere">
          {actor.name ? `${actor.name} · ` : ""}
          {actor.email} · role <strong data-testid="profile-role">{actor.role}</strong>
        </span>
      </div>
      <section className="section" aria-labelledby="tokens-h">
        <h2 id="tokens-h">API tokens</h2>
        <p className="hint">
          Scripts and CI call the console&apos;s API with <code>Authorization: Bearer &lt;token&gt;</code>. A token acts
          as you, with the role you give it, and never above your role at the time of each call: if your role is lowered
          or your account disabled, your tokens follow at once. Tokens start with <code>dlqc_</code> so secret scanners
          can find leaked ones; they live at most {MAX_TOKEN_DAYS} days. Every call is recorded in the audit log under
          your name and the token.{" "}
          <Link href="/api-reference" data-testid="api-reference-link">
            What a token can call: the API reference →
          </Link>
        </p>
        <CreateTokenForm roles={rolesUpTo(actor.role)} dayChoices={TOKEN_DAY_CHOICES} defaultDays={90} />
        <div className="section">
          <TokensTable tokens={tokens} scope="own" emptyText="You have no API tokens yet." />
        </div>
        {can(actor.role, "tokens:manage") ? (
          <p className="hint">
            <Link href="/admin/tokens" data-testid="all-tokens-link">
              Every user&apos;s tokens →
            </Link>
          </p>
        ) : null}
      </section>
    </main>
  );
}
