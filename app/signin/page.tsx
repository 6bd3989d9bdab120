import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getActor } from "@/lib/auth/session";
import { SignInForm } from "@/components/auth/sign-in-form";

export const metadata: Metadata = { title: "Sign in · DLQ Console" };

/** Only same-site paths are accepted as a destination after sign-in. */
function safeCallback(raw: string | string[] | undefined): string {
  const v = Array.isArray(raw) ? raw[0] : raw;
  return v && v.startsWith("/") && !v.startsWith("//") && !v.startsWith("/\\") ? v : "/";
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const callbackUrl = safeCallback(params.callbackUrl);
  if (await getActor()) redirect(callbackUrl);
  return (
    <main className="signin-page">
      <div className="signin-card">
        <h1>DLQ Console</h1>
        <p className="muted">Sign in to triage dead letters.</p>
        <SignInForm callbackUrl={callbackUrl} />
      </div>
    </main>
  );
}
