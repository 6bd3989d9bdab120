/**
 * A local OpenID Connect identity provider for tests only (oidc-provider, in memory, loopback, no
 * network). e2e/oidc.spec.ts starts it and stops it.
 *
 *   npx tsx scripts/oidc-test-idp.ts --port 3102 --redirect http://127.0.0.1:3101/api/auth/callback/oidc
 *
 * Users (log in with the name as "login", any password), by group:
 *   admin-sso   -> dlq-admins          viewer-sso -> dlq-viewers
 *   ops-sso     -> dlq-operators, eng  nobody-sso -> other (maps to no role)
 * Each has the email <name>@sso.test, verified. Consent is granted automatically.
 */
import Provider from "oidc-provider";

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? process.argv[i + 1] : fallback;
  if (!v) throw new Error(`--${name} is required`);
  return v;
}

export const TEST_IDP_CLIENT = { id: "dlq-console-e2e", secret: "test-only-client-secret-0123456789" } as const;

const ACCOUNTS: Record<string, { name: string; groups: string[] }> = {
  "admin-sso": { name: "Ada Admin", groups: ["dlq-admins"] },
  "ops-sso": { name: "Otto Operator", groups: ["dlq-operators", "eng"] },
  "viewer-sso": { name: "Vera Viewer", groups: ["dlq-viewers"] },
  "nobody-sso": { name: "Nora Nobody", groups: ["other"] },
};

/** The few parts of oidc-provider's context used here (the package ships no types). */
interface GrantLike {
  addOIDCScope(scope: string): void;
  save(): Promise<string>;
}
interface InteractionCtx {
  oidc: {
    client?: { clientId: string };
    session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
    provider: {
      Grant: {
        new (init: { clientId: string; accountId: string }): GrantLike;
        find(id: string): Promise<GrantLike | undefined>;
      };
    };
  };
}

const port = Number(arg("port", "3102"));
const redirect = arg("redirect");
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: TEST_IDP_CLIENT.id,
      client_secret: TEST_IDP_CLIENT.secret,
      redirect_uris: [redirect],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  scopes: ["openid", "email", "profile", "groups"],
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
  // Put the scope's claims in the ID token (the console reads the ID token, not userinfo).
  conformIdTokenClaims: false,
  cookies: { keys: ["test-only-cookie-key-not-secret"] },
  features: { devInteractions: { enabled: true } },
  async findAccount(_ctx: unknown, id: string) {
    const a = ACCOUNTS[id];
    if (!a) return undefined;
    return {
      accountId: id,
      claims: async () => ({ sub: id, email: `${id}@sso.test`, email_verified: true, name: a.name, groups: a.groups }),
    };
  },
  // First-party test client: no consent screen.
  async loadExistingGrant(ctx: InteractionCtx) {
    const clientId = ctx.oidc.client!.clientId;
    const existing = ctx.oidc.session!.grantIdFor(clientId);
    if (existing) return ctx.oidc.provider.Grant.find(existing);
    const grant = new ctx.oidc.provider.Grant({ clientId, accountId: ctx.oidc.session!.accountId! });
    grant.addOIDCScope("openid email profile groups");
    await grant.save();
    return grant;
  },
});

const server = provider.listen(port, "127.0.0.1", () => console.log(`test IdP ready at ${issuer}`));
for (const s of ["SIGTERM", "SIGINT"] as const) process.on(s, () => server.close(() => process.exit(0)));
