"use client";

import { useState, useTransition } from "react";
import { verifyAuditAction } from "@/app/audit/actions";
import type { AuditChainResult } from "@/lib/audit/types";

export function VerifyChainButton() {
  const [pending, start] = useTransition();
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  return (
    <span style={{ display: "inline-flex", gap: 6, alignItems: "center" }}>
      <button
        type="button"
        className="btn btn-small"
        disabled={pending}
        data-testid="audit-verify"
        onClick={() =>
          start(async () => {
            const r = await verifyAuditAction();
            if (!r.ok) return setResult({ ok: false, text: r.error.message });
            const d = r.data as AuditChainResult;
            const where = d.brokenAt?.id ? ` at row ${d.brokenAt.id}` : "";
            const held = d.checkpoints.checked > 0 ? `, held to ${d.checkpoints.checked} checkpoint(s)` : "";
            setResult({
              ok: d.ok,
              text: d.ok
                ? `Chain intact (${d.checked} rows checked${held})`
                : `Chain broken${where}: ${d.brokenAt?.reason ?? "unknown reason"}`,
            });
          })
        }
      >
        {pending ? "Verifying…" : "Verify chain"}
      </button>
      {result ? (
        <span className={`badge ${result.ok ? "badge-ok" : "badge-danger"}`} data-testid="audit-verify-result">
          {result.text}
        </span>
      ) : null}
    </span>
  );
}
