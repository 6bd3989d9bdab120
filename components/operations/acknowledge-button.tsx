"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { acknowledgeFindingAction, acknowledgeFindingKindAction } from "@/app/findings/actions";
import { useHydrated } from "@/components/ui/use-hydrated";
import type { ActionResult } from "@/lib/errors";

/** The button both acknowledgements share: disabled until hydrated and while pending; refreshes the page on success. */
function AckButton({
  testId,
  title,
  label,
  acknowledge,
}: {
  testId: string;
  title: string;
  label: string;
  acknowledge: () => Promise<ActionResult<unknown>>;
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
        data-testid={testId}
        disabled={!hydrated || pending}
        title={title}
        onClick={() =>
          start(async () => {
            setError(null);
            const r = await acknowledge();
            if (!r.ok) setError(r.error.message);
            else router.refresh();
          })
        }
      >
        {pending ? "Acknowledging…" : label}
      </button>
      {error ? (
        <span className="form-error" role="alert" data-testid={`${testId}-error`}>
          {error}
        </span>
      ) : null}
    </span>
  );
}

/** Acknowledge one finding (operators, admins; the server checks). The page reloads to show who and when. */
export function AcknowledgeButton({ id }: { id: string }) {
  return (
    <AckButton
      testId="finding-ack"
      title="Say you have seen it: it stays listed until the fault is fixed"
      label="Acknowledge"
      acknowledge={() => acknowledgeFindingAction({ id })}
    />
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
  return (
    <AckButton
      testId="finding-ack-all"
      title="Say you have seen every finding of this kind: they stay open until each fault is fixed"
      label={count === 1 ? "Acknowledge" : `Acknowledge all ${count}`}
      acknowledge={() => acknowledgeFindingKindAction({ code, ...(connectionId ? { connectionId } : {}) })}
    />
  );
}
