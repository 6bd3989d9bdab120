"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { updateUserAction } from "@/app/admin/users/actions";
import type { Role } from "@/lib/auth/permissions";

export function UserRowActions({
  id,
  role,
  disabled,
  isSelf,
}: {
  id: string;
  role: Role;
  disabled: boolean;
  isSelf: boolean;
}) {
  const router = useRouter();
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const run = (change: { role?: Role; disabled?: boolean }) =>
    start(async () => {
      setError(null);
      const r = await updateUserAction({ id, ...change });
      if (!r.ok) setError(r.error.message);
      else router.refresh();
    });
  return (
    <span style={{ display: "inline-flex", gap: 6, alignItems: "center", flexWrap: "wrap" }}>
      <label className="sr-only" htmlFor={`role-${id}`}>
        Role
      </label>
      <select
        id={`role-${id}`}
        value={role}
        disabled={pending || isSelf}
        data-testid="user-role-select"
        onChange={(e) => run({ role: e.target.value as Role })}
        title={isSelf ? "You cannot change your own role" : "Change role"}
      >
        <option value="viewer">viewer</option>
        <option value="operator">operator</option>
        <option value="admin">admin</option>
      </select>
      <button
        type="button"
        className={`btn btn-small${disabled ? "" : " btn-danger"}`}
        disabled={pending || isSelf}
        data-testid="user-toggle-disabled"
        title={
          disabled
            ? "Let this user sign in again (their old sessions and API tokens stay ended)"
            : "Disable: ends every session of this user and revokes every API token of theirs, for good"
        }
        onClick={() => run({ disabled: !disabled })}
      >
        {disabled ? "Enable" : "Disable"}
      </button>
      {error ? <span className="form-error">{error}</span> : null}
    </span>
  );
}
