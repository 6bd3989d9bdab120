"use client";

import { useRouter } from "next/navigation";
import { useRef, useState, useTransition } from "react";
import { createTokenAction } from "@/app/profile/actions";
import { CopyButton } from "@/components/ui/copy-button";
import type { Role } from "@/lib/auth/permissions";

/**
 * Creates a personal API token and shows it once. The raw token lives in this component's state
 * only: it is gone when the user dismisses it or leaves the page, and the server cannot show it again.
 */
export function CreateTokenForm({
  roles,
  dayChoices,
  defaultDays,
}: {
  roles: Role[];
  dayChoices: readonly number[];
  defaultDays: number;
}) {
  const router = useRouter();
  const formRef = useRef<HTMLFormElement>(null);
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  return (
    <div className="form-stack">
      <form
        ref={formRef}
        className="form-row card"
        data-testid="create-token-form"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          setError(null);
          setCreated(null);
          start(async () => {
            const r = await createTokenAction({
              name: String(f.get("name") ?? ""),
              role: String(f.get("role") ?? "viewer"),
              expiresInDays: Number(f.get("expiresInDays") ?? defaultDays),
            });
            if (!r.ok) return setError(r.error.message);
            formRef.current?.reset();
            setCreated({ token: r.data.token, name: r.data.view.name });
            router.refresh();
          });
        }}
      >
        <label>
          Name (what will use it)
          <input
            name="name"
            required
            maxLength={100}
            autoComplete="off"
            placeholder="e.g. nightly redrive job"
            style={{ width: 240 }}
            data-testid="token-name"
          />
        </label>
        <label>
          Role (at most yours)
          <select name="role" defaultValue={roles[0]} data-testid="token-role">
            {roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label>
          Expires after
          <select name="expiresInDays" defaultValue={String(defaultDays)} data-testid="token-expiry">
            {dayChoices.map((d) => (
              <option key={d} value={d}>
                {d} days
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="btn btn-primary" disabled={pending} data-testid="create-token-submit">
          {pending ? "Creating…" : "Create token"}
        </button>
        {error ? (
          <p className="form-error" role="alert" style={{ flexBasis: "100%", margin: 0 }}>
            {error}
          </p>
        ) : null}
      </form>
      {created ? (
        <div className="banner banner-warn" role="status" data-testid="new-token">
          <p style={{ marginTop: 0 }}>
            <strong>Copy the token “{created.name}” now: it is shown this once.</strong> The console keeps only a hash
            of it and cannot show it again. Keep it in a secret store; never in a repository, a URL or a log. Send it as{" "}
            <code>Authorization: Bearer &lt;token&gt;</code>.
          </p>
          <p style={{ display: "flex", gap: 8, alignItems: "center", flexWrap: "wrap", marginBottom: 0 }}>
            <code className="wrap-anywhere" data-testid="new-token-value" style={{ userSelect: "all" }}>
              {created.token}
            </code>
            <CopyButton text={created.token} label="Copy token" testId="copy-token" />
            <button
              type="button"
              className="btn btn-small"
              data-testid="dismiss-token"
              onClick={() => setCreated(null)}
            >
              I have stored it
            </button>
          </p>
        </div>
      ) : null}
    </div>
  );
}
