"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { saveOwnerAction } from "@/app/owners/actions";
import { useHydrated } from "@/components/ui/use-hydrated";

export interface OwnerDraft {
  id?: string;
  position: number;
  connectionPattern: string | null;
  queuePattern: string;
  team: string;
  contact: string;
}

/** Adds an owner entry, or edits one (admins; the server checks and audits). */
export function OwnerForm({ draft, onDone, testId }: { draft: OwnerDraft; onDone?: () => void; testId: string }) {
  const router = useRouter();
  const hydrated = useHydrated();
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const editing = !!draft.id;
  return (
    <form
      className="form-row owner-form"
      data-testid={testId}
      onSubmit={(e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const f = new FormData(form);
        start(async () => {
          setError(null);
          setSaved(false);
          const r = await saveOwnerAction({
            ...(draft.id ? { id: draft.id } : {}),
            position: String(f.get("position") ?? "0"),
            connectionPattern: String(f.get("connectionPattern") ?? ""),
            queuePattern: String(f.get("queuePattern") ?? ""),
            team: String(f.get("team") ?? ""),
            contact: String(f.get("contact") ?? ""),
          });
          if (!r.ok) {
            setError(r.error.message);
            return;
          }
          if (!editing) form.reset();
          setSaved(true);
          router.refresh();
          onDone?.();
        });
      }}
    >
      <label>
        Position
        <input
          name="position"
          type="number"
          min={0}
          max={100000}
          step={1}
          defaultValue={draft.position}
          style={{ width: 80 }}
          data-testid="owner-position"
        />
      </label>
      <label>
        Connection (id or pattern; empty: any)
        <input
          name="connectionPattern"
          defaultValue={draft.connectionPattern ?? ""}
          className="mono"
          placeholder="any"
          maxLength={300}
          data-testid="owner-connection"
        />
      </label>
      <label>
        DLQ name pattern
        <input
          name="queuePattern"
          defaultValue={draft.queuePattern}
          className="mono"
          placeholder="orders.*"
          required
          maxLength={300}
          data-testid="owner-queue"
        />
      </label>
      <label>
        Team
        <input name="team" defaultValue={draft.team} required maxLength={100} data-testid="owner-team" />
      </label>
      <label>
        Contact
        <input
          name="contact"
          defaultValue={draft.contact}
          required
          maxLength={300}
          placeholder="#channel, address or URL"
          data-testid="owner-contact"
        />
      </label>
      <button type="submit" className="btn btn-primary" disabled={!hydrated || pending} data-testid="owner-save">
        {pending ? "Saving…" : editing ? "Save" : "Add owner"}
      </button>
      {editing && onDone ? (
        <button type="button" className="btn btn-quiet" onClick={onDone} disabled={pending}>
          Cancel
        </button>
      ) : null}
      {error ? (
        <span className="form-error" role="alert" data-testid="owner-error">
          {error}
        </span>
      ) : saved && !editing ? (
        <span className="form-ok" role="status" data-testid="owner-saved">
          Added.
        </span>
      ) : null}
    </form>
  );
}
