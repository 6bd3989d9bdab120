"use client";

import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { deleteAlertRuleAction, sendTestAlertAction } from "@/app/alerts/actions";

/** An admin's controls on a rule's page: edit, send a test message, delete (after a second click naming the rule). */
export function RuleControls({ id, name }: { id: string; name: string }) {
  const router = useRouter();
  const [pending, start] = useTransition();
  const [confirming, setConfirming] = useState(false);
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);

  const sendTest = () =>
    start(async () => {
      setMsg(null);
      const r = await sendTestAlertAction({ id });
      if (!r.ok) return setMsg({ ok: false, text: r.error.message });
      setMsg(
        r.data.delivered
          ? { ok: true, text: `Test message delivered (HTTP ${r.data.statusCode}).` }
          : { ok: false, text: `Test message not delivered: ${r.data.error}` },
      );
      router.refresh();
    });

  const remove = () =>
    start(async () => {
      setMsg(null);
      const r = await deleteAlertRuleAction({ id });
      if (!r.ok) return setMsg({ ok: false, text: r.error.message });
      router.push("/alerts");
      router.refresh();
    });

  return (
    <div
      className="toolbar"
      data-testid="alert-rule-controls"
      style={{ display: "flex", gap: 8, alignItems: "center", flexWrap: "wrap" }}
    >
      <Link className="btn" href={`/alerts/${id}/edit`} data-testid="alert-rule-edit">
        Edit
      </Link>
      <button type="button" className="btn" disabled={pending} onClick={sendTest} data-testid="alert-rule-test">
        {pending && !confirming ? "Sending…" : "Send test message"}
      </button>
      {confirming ? (
        <>
          <button
            type="button"
            className="btn btn-danger"
            disabled={pending}
            onClick={remove}
            data-testid="alert-rule-delete-confirm"
          >
            Delete “{name}” with its delivery log
          </button>
          <button type="button" className="btn btn-quiet" disabled={pending} onClick={() => setConfirming(false)}>
            Keep it
          </button>
        </>
      ) : (
        <button
          type="button"
          className="btn btn-danger"
          disabled={pending}
          onClick={() => setConfirming(true)}
          data-testid="alert-rule-delete"
        >
          Delete…
        </button>
      )}
      {msg ? (
        <span className={msg.ok ? "form-ok" : "form-error"} role="status" data-testid="alert-rule-control-message">
          {msg.text}
        </span>
      ) : null}
    </div>
  );
}
