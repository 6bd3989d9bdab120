// oidc-provider ships no types; the test identity provider (scripts/oidc-test-idp.ts) is its only user.
declare module "oidc-provider";
