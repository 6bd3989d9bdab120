import type { Metadata } from "next";
import { TokensTable } from "@/components/tokens/tokens-table";
import { listAllTokens } from "@/lib/api-tokens";
import { authorizePage } from "@/lib/auth/authorize-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";

export const metadata: Metadata = { title: "API tokens" };
export const dynamic = "force-dynamic";

/** Every user's API tokens, newest first, for admins to review and revoke. */
export default async function AdminTokensPage() {
  const actor = await requirePageActor("/admin/tokens");
  const meta = await requestMeta();
  // Before anything streams, so a refusal answers 403 (./forbidden.tsx); audited as token.list_all.
  await authorizePage(actor, "tokens:manage", { action: "token.list_all", meta });
  const tokens = await listAllTokens(actor, meta);
  return (
    <main className="page">
      <div className="page-head">
        <h1>API tokens</h1>
        <span className="meta">
          Every user&apos;s personal API tokens (the newest 500). Revoking one stops it at once; each revocation is
          recorded in the audit log.
        </span>
      </div>
      <TokensTable tokens={tokens} owners scope="any" emptyText="No one has created an API token yet." />
    </main>
  );
}
