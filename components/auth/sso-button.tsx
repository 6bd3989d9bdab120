"use client";

import { signIn } from "next-auth/react";
import { useState } from "react";

/** Starts the OpenID Connect sign-in (next-auth posts, then the browser goes to the provider). */
export function SsoButton({ providerId, name, callbackUrl }: { providerId: string; name: string; callbackUrl: string }) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className="btn btn-primary"
      data-testid="sso-sign-in"
      disabled={busy}
      onClick={() => {
        setBusy(true);
        void signIn(providerId, { callbackUrl });
      }}
    >
      {busy ? "Redirecting…" : `Sign in with ${name}`}
    </button>
  );
}
