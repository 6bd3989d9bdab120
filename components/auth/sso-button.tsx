"use client";

import { signIn } from "next-auth/react";
import { useState } from "react";
import { useHydrated } from "@/components/ui/use-hydrated";

/** Starts the OpenID Connect sign-in (next-auth posts, then the browser goes to the provider). */
export function SsoButton({
  providerId,
  name,
  callbackUrl,
}: {
  providerId: string;
  name: string;
  callbackUrl: string;
}) {
  const [busy, setBusy] = useState(false);
  const hydrated = useHydrated();
  return (
    <button
      type="button"
      className="btn btn-primary"
      data-testid="sso-sign-in"
      disabled={busy || !hydrated}
      onClick={() => {
        setBusy(true);
        void signIn(providerId, { callbackUrl });
      }}
    >
      {busy ? "Redirecting…" : `Sign in with ${name}`}
    </button>
  );
}
