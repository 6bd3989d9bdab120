"use client";

import { useRouter } from "next/navigation";
import { useRef, useState, useTransition } from "react";
import { createUserAction } from "@/app/admin/users/actions";

export function CreateUserForm() {
  const router = useRouter();
  const formRef = useRef<HTMLFormElement>(null);
  const [pending, start] = useTransition();
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  return (
    <form
      ref={formRef}
      className="form-row card"
      data-testid="create-user-form"
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        setMsg(null);
        start(async () => {
          const r = await createUserAction({
            email: String(f.get("email") ?? ""),
            name: String(f.get("name") ?? ""),
            role: String(f.get("role") ?? "viewer"),
            password: String(f.get("password") ?? ""),
          });
          if (!r.ok) return setMsg({ ok: false, text: r.error.message });
          formRef.current?.reset();
          setMsg({ ok: true, text: `Created ${r.data.email}. Give them the initial password through a safe channel.` });
          router.refresh();
        });
      }}
    >
      <label>
        Email
        <input name="email" type="email" required autoComplete="off" style={{ width: 220 }} />
      </label>
      <label>
        Name
        <input name="name" autoComplete="off" style={{ width: 160 }} />
      </label>
      <label>
        Role
        <select name="role" defaultValue="viewer">
          <option value="viewer">viewer</option>
          <option value="operator">operator</option>
          <option value="admin">admin</option>
        </select>
      </label>
      <label>
        Initial password (12+ characters)
        <input
          name="password"
          type="password"
          required
          minLength={12}
          autoComplete="new-password"
          style={{ width: 200 }}
        />
      </label>
      <button type="submit" className="btn btn-primary" disabled={pending} data-testid="create-user-submit">
        {pending ? "Creating…" : "Create user"}
      </button>
      {msg ? (
        <p className={msg.ok ? "form-ok" : "form-error"} role="status" style={{ flexBasis: "100%", margin: 0 }}>
          {msg.text}
        </p>
      ) : null}
    </form>
  );
}
