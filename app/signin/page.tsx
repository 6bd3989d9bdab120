import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getActor } from "@/lib/auth/session";
import { signInMethods } from "@/lib/auth/options";
import { signInErrorMessage } from "@/lib/auth/sign-in-errors";
import { SignInForm } from "@/components/auth/sign-in-form";
import { SsoButton } from "@/components/auth/sso-button";
import { safeCallbackPath } from "@/lib/auth/callback-url";

export const metadata: Metadata = { title: "Sign in · DLQ Console" };

/** Only same-site paths are accepted as a destination after sign-in. */
export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const callbackUrl = safeCallbackPath(params.callbackUrl);
  if (await getActor()) redirect(callbackUrl);
  const methods = signInMethods();
  // Errors from a redirect (single sign-on); the credentials form shows its own.
  const error = signInErrorMessage(Array.isArray(params.error) ? params.error[0] : params.error);
  return (
    <main className="signin-page">
      <div className="signin-card">
        <h1>DLQ Console</h1>
        <p className="muted">Sign in to triage dead letters.</p>
        {error ? (
          <p role="alert" className="form-error" data-testid="sign-in-page-error">
            {error}
          </p>
        ) : null}
        {methods.oidc ? (
          <SsoButton providerId={methods.oidc.id} name={methods.oidc.name} callbackUrl={callbackUrl} />
        ) : null}
        {methods.oidc && methods.credentials ? <p className="muted">or</p> : null}
        {methods.credentials ? <SignInForm callbackUrl={callbackUrl} /> : null}
        {!methods.oidc && !methods.credentials ? (
          <p className="form-error">
            No sign-in method is configured (DLQ_AUTH_CREDENTIALS is off and OIDC is not set up).
          </p>
        ) : null}
      </div>
    </main>
  );
}
