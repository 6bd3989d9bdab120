"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { confirmRiskyReadAction } from "@/app/dlqs/[connectionId]/[queue]/actions";
import type { ReadRisk } from "@/lib/brokers/types";

/** The warning and the audited confirmation that a risky DLQ read requires. */
export function RiskConfirm({ connectionId, queue, risk, canConfirm }: { connectionId: string; queue: string; risk: ReadRisk; canConfirm: boolean }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  return (
    <div className="banner banner-warn" role="alert" data-testid="read-risk">
      <p>
        <strong>Reading this DLQ can lose letters.</strong> {risk.message}
      </p>
      <p>
        Every read returns each letter to the queue and the broker counts that as a delivery; a letter that reaches the limit is dropped or
        dead-lettered again. Nothing has been read yet.
      </p>
      {canConfirm ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setError(null);
            start(async () => {
              const r = await confirmRiskyReadAction({ connectionId, queue });
              if (!r.ok) setError(r.error.message);
              else router.refresh();
            });
          }}
        >
          <button type="submit" className="btn btn-danger" disabled={pending} data-testid="confirm-risky-read">
            {pending ? "Recording confirmation…" : "I accept the risk: read this DLQ for the next 10 minutes"}
          </button>{" "}
          <span className="hint">Your confirmation is recorded in the audit log.</span>
          {error ? <p className="form-error" style={{ marginTop: 8 }}>{error}</p> : null}
        </form>
      ) : (
        <p data-testid="risk-not-allowed">
          <strong>Your role cannot confirm this read.</strong> Ask an operator or admin to look at these letters.
        </p>
      )}
    </div>
  );
}
