"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { revokeAnyTokenAction } from "@/app/admin/tokens/actions";
import { revokeMyTokenAction } from "@/app/profile/actions";

/** Revokes a token after a second click that names it; "own" on the profile page, "any" for admins. */
export function RevokeTokenButton({ id, name, scope }: { id: string; name: string; scope: "own" | "any" }) {
  const router = useRouter();
  const [pending, start] = useTransition();
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!confirming) {
    return (
      <button
        type="button"
        className="btn btn-small btn-danger"
        data-testid="revoke-token"
        onClick={() => setConfirming(true)}
      >
        Revoke
      </button>
    );
  }
  return (
    <span style={{ display: "inline-flex", gap: 6, alignItems: "center", flexWrap: "wrap" }}>
      <span className="wrap-anywhere">Revoke “{name}”? Scripts using it stop at once.</span>
      <button
        type="button"
        className="btn btn-small btn-danger"
        disabled={pending}
        data-testid="revoke-token-confirm"
        onClick={() =>
          start(async () => {
            setError(null);
            const r = scope === "own" ? await revokeMyTokenAction({ id }) : await revokeAnyTokenAction({ id });
            if (!r.ok) return setError(r.error.message);
            setConfirming(false);
            router.refresh();
          })
        }
      >
        {pending ? "Revoking…" : "Revoke"}
      </button>
      <button type="button" className="btn btn-small" disabled={pending} onClick={() => setConfirming(false)}>
        Cancel
      </button>
      {error ? <span className="form-error">{error}</span> : null}
    </span>
  );
}
