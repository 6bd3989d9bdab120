"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { acknowledgeFindingAction, acknowledgeFindingKindAction } from "@/app/findings/actions";
import { useHydrated } from "@/components/ui/use-hydrated";

/** Acknowledge one finding (operators, admins; the server checks). The page reloads to show who and when. */
export function AcknowledgeButton({ id }: { id: string }) {
  const router = useRouter();
  const hydrated = useHydrated();
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <span className="ack">
      <button
        type="button"
        className="btn btn-small"
        data-testid="finding-ack"
        disabled={!hydrated || pending}
        title="Say you have seen it: it stays listed until the fault is fixed"
        onClick={() =>
          start(async () => {
            setError(null);
            const r = await acknowledgeFindingAction({ id });
            if (!r.ok) setError(r.error.message);
            else router.refresh();
          })
        }
      >
        {pending ? "Acknowledging…" : "Acknowledge"}
      </button>
      {error ? (
        <span className="form-error" role="alert" data-testid="finding-ack-error">
          {error}
        </span>
      ) : null}
    </span>
  );
}

/**
 * Acknowledge every open finding of one kind at once (operators, admins; the server checks and
 * writes one audit row with the count). Scoped to the connection the page is filtered to.
 */
export function AcknowledgeKindButton({
  code,
  count,
  connectionId,
}: {
  code: string;
  count: number;
  connectionId?: string;
}) {
  const router = useRouter();
  const hydrated = useHydrated();
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <span className="ack">
      <button
        type="button"
        className="btn btn-small"
        data-testid="finding-ack-all"
        disabled={!hydrated || pending}
        title="Say you have seen every finding of this kind: they stay open until each fault is fixed"
        onClick={() =>
          start(async () => {
            setError(null);
            const r = await acknowledgeFindingKindAction({ code, ...(connectionId ? { connectionId } : {}) });
            if (!r.ok) setError(r.error.message);
            else router.refresh();
          })
        }
      >
        {pending ? "Acknowledging…" : count === 1 ? "Acknowledge" : `Acknowledge all ${count}`}
      </button>
      {error ? (
        <span className="form-error" role="alert" data-testid="finding-ack-all-error">
          {error}
        </span>
      ) : null}
    </span>
  );
}
