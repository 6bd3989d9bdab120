"use client";

import { signIn } from "next-auth/react";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { signInErrorMessage } from "@/lib/auth/sign-in-errors";
import { useHydrated } from "@/components/ui/use-hydrated";

export function SignInForm({ callbackUrl }: { callbackUrl: string }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const res = await signIn("credentials", {
        email: String(form.get("email") ?? ""),
        password: String(form.get("password") ?? ""),
        redirect: false,
        callbackUrl,
      });
      if (!res || res.error) {
        setError(signInErrorMessage(res?.error ?? "CredentialsSignin"));
        return;
      }
      router.replace(callbackUrl);
      router.refresh();
    } catch {
      setError("The console could not be reached. Check your connection and try again.");
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={onSubmit} method="post" className="form-stack" data-testid="sign-in-form" noValidate>
      <label>
        <span>Email</span>
        {/* biome-ignore lint/a11y/noAutofocus: the sign-in page exists only to sign in; an error above is role=alert, so it is still announced */}
        <input name="email" type="email" autoComplete="username" required autoFocus />
      </label>
      <label>
        <span>Password</span>
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      {error ? (
        <p role="alert" className="form-error" data-testid="sign-in-error">
          {error}
        </p>
      ) : null}
      <button type="submit" className="btn btn-primary" disabled={busy || !hydrated}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
