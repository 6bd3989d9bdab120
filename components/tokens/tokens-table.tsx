import { EmptyRow } from "@/components/ui/empty-row";
import { RelativeTime } from "@/components/ui/relative-time";
import type { TokenAdminView, TokenState, TokenView } from "@/lib/api-tokens";
import { RevokeTokenButton } from "./revoke-token-button";

const STATE_BADGE: Record<TokenState, string> = {
  active: "badge badge-ok",
  expired: "badge",
  revoked: "badge badge-danger",
};

/**
 * A list of API tokens: never their secret (the server has none to give). With `owners`, each row
 * names its user and who revoked it (the admin page). Names are whatever their owners typed: text.
 */
export function TokensTable({
  tokens,
  owners,
  scope,
  emptyText,
}: {
  tokens: Array<TokenView | TokenAdminView>;
  owners?: boolean;
  scope: "own" | "any";
  emptyText: string;
}) {
  const columns = owners ? 10 : 9;
  return (
    <div className="table-wrap">
      <table className="grid" data-testid="tokens-table">
        <thead>
          <tr>
            {owners ? <th>User</th> : null}
            <th>Name</th>
            <th>Prefix</th>
            <th>Role</th>
            <th>State</th>
            <th>Created</th>
            <th>Last used</th>
            <th>Expires</th>
            <th>Revoked</th>
            <th>
              <span className="sr-only">Revoke</span>
            </th>
          </tr>
        </thead>
        <tbody>
          <EmptyRow show={tokens.length === 0} columns={columns}>
            {emptyText}
          </EmptyRow>
          {tokens.map((t) => (
            <tr key={t.id} data-testid="token-row" data-token-id={t.id} data-state={t.state}>
              {owners ? (
                <td className="wrap-anywhere">
                  {"userEmail" in t ? (t.userEmail ?? <span className="muted">deleted user</span>) : null}
                </td>
              ) : null}
              <td className="wrap-anywhere" data-testid="token-name-cell">
                {t.name}
              </td>
              <td className="nowrap">
                <code>{t.prefix}…</code>
              </td>
              <td>{t.role}</td>
              <td>
                <span className={STATE_BADGE[t.state]}>{t.state}</span>
              </td>
              <td className="nowrap">
                <RelativeTime value={t.createdAt} />
              </td>
              <td className="nowrap">
                {t.lastUsedAt ? <RelativeTime value={t.lastUsedAt} /> : <span className="muted">never</span>}
              </td>
              <td className="nowrap">
                <RelativeTime value={t.expiresAt} />
              </td>
              <td className="nowrap">
                {t.revokedAt ? (
                  <>
                    <RelativeTime value={t.revokedAt} />
                    {"revokedByEmail" in t && t.revokedByEmail ? (
                      <span className="muted wrap-anywhere"> by {t.revokedByEmail}</span>
                    ) : null}
                  </>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td>{t.state === "active" ? <RevokeTokenButton id={t.id} name={t.name} scope={scope} /> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
