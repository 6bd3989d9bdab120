"use client";

import Link from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, useTransition, type FormEvent } from "react";
import {
  cancelSkipAction,
  planSkipAction,
  startSkipAction,
} from "@/app/groups/[connectionId]/[groupId]/[topic]/[partition]/actions";
import { RelativeTime } from "@/components/ui/relative-time";
import type { SkipPlan, SkipView } from "@/lib/consumer-groups/skip";
import { skipApiHref } from "@/lib/consumer-groups/links";
import { dlqHref, letterHref } from "@/lib/dlq/links";
import { isActive } from "@/lib/redrive/ui-format";

interface Props {
  connectionId: string;
  groupId: string;
  topic: string;
  partition: number;
  committed: string | null;
  end: string;
  /** groups:skip and a record to skip: the UI only reflects it, the use cases check it again. */
  canSkip: boolean;
  skips: SkipView[];
}

/**
 * "Move to the DLT and skip" for admins (preview, reason, confirmed count, wait for an empty group),
 * and this partition's skips with their live progress.
 */
export function SkipPanel(props: Props) {
  const [started, setStarted] = useState<SkipView[]>([]);
  const jobs = [...started, ...props.skips.filter((s) => !started.some((x) => x.id === s.id))];
  return (
    <>
      {props.canSkip ? <SkipForm {...props} onStarted={(v) => setStarted((s) => [v, ...s])} /> : null}
      {jobs.length > 0 ? (
        <section className="card section" data-testid="skips">
          <h2>Skips of this partition</h2>
          {jobs.map((j) => (
            <SkipJob key={j.id} initial={j} connectionId={props.connectionId} canCancel={props.canSkip} />
          ))}
        </section>
      ) : null}
    </>
  );
}

function SkipForm({
  connectionId,
  groupId,
  topic,
  partition,
  onStarted,
}: Props & { onStarted: (v: SkipView) => void }) {
  const [upTo, setUpTo] = useState("");
  const [plan, setPlan] = useState<SkipPlan | null>(null);
  const [reason, setReason] = useState("");
  const [wait, setWait] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const ref = { connectionId, groupId, topic, partition };

  const preview = () => {
    setError(null);
    start(async () => {
      const r = await planSkipAction({ ...ref, ...(upTo.trim() ? { upToOffset: upTo.trim() } : {}) });
      if (r.ok) setPlan(r.data);
      else {
        setPlan(null);
        setError(r.error.message);
      }
    });
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!plan) return;
    setError(null);
    start(async () => {
      const r = await startSkipAction({
        ...ref,
        expectedCommitted: plan.committed,
        upToOffset: plan.upToOffset,
        confirmedCount: plan.count,
        reason,
        waitForEmpty: wait,
      });
      if (r.ok) {
        onStarted(r.data);
        setPlan(null);
        setReason("");
      } else setError(r.error.message);
    });
  };

  const blocked = plan !== null && !plan.dltExists && !plan.willCreate;
  const mustWait = plan !== null && !plan.canRunNow;
  const ready = plan !== null && !blocked && reason.trim().length >= 3 && (!mustWait || wait) && !pending;

  return (
    <form className="card section" onSubmit={submit} data-testid="skip-form" aria-label="Move to the DLT and skip">
      <h2>Move to the DLT and skip</h2>
      <p className="muted">
        The record is copied to the group&apos;s DLT with its key, value, headers and timestamp and the reason; only
        once Kafka confirmed every copy is the group&apos;s committed offset set past it. Nothing else in the partition
        is skipped. Kafka allows this only while the group has no members.
      </p>
      <div className="toolbar">
        <label>
          Skip up to offset{" "}
          <input
            className="input mono"
            inputMode="numeric"
            value={upTo}
            onChange={(e) => {
              setUpTo(e.target.value);
              setPlan(null);
            }}
            placeholder="just the next record"
            data-testid="skip-up-to"
            size={16}
          />
        </label>
        <button type="button" className="btn" onClick={preview} disabled={pending} data-testid="skip-preview">
          {pending && !plan ? "Looking…" : "Preview"}
        </button>
      </div>
      {plan ? (
        <div className="section" data-testid="skip-plan" data-count={plan.count}>
          <p>
            <strong data-testid="skip-count">
              {plan.count} record{plan.count === 1 ? "" : "s"}
            </strong>{" "}
            (
            {plan.upToOffset !== plan.firstOffset
              ? `offsets ${plan.firstOffset}–${plan.upToOffset}`
              : `offset ${plan.firstOffset}`}
            ) will be copied to{" "}
            <span className="mono" data-testid="skip-dlt">
              {plan.dlt}
            </span>
            {plan.dltExists ? "" : plan.willCreate ? " (created, as the connection allows)" : ""}, then the committed
            offset moves from {plan.committed ?? "none"} to {(BigInt(plan.upToOffset) + 1n).toString()}.
          </p>
          {blocked ? (
            <div className="banner banner-error" role="alert">
              The DLT <span className="mono">{plan.dlt}</span> does not exist and this connection does not let the
              console create it (consumerGroups.createDlt). Create it, or name another DLT for this group
              (consumerGroups.dlts).
            </div>
          ) : null}
          {mustWait ? (
            <div className="banner banner-warn" role="status" data-testid="skip-members">
              <p>
                <strong>
                  The group has {plan.members.length} active member{plan.members.length === 1 ? "" : "s"}
                </strong>
                , so Kafka will not let its offset be set now:{" "}
                {plan.members.map((m) => `${m.clientId} (${m.host})`).join(", ")}. Scale the consumers to zero, or let
                the console wait for that.
              </p>
              <label>
                <input
                  type="checkbox"
                  checked={wait}
                  onChange={(e) => setWait(e.target.checked)}
                  data-testid="skip-wait"
                />{" "}
                Wait until the group has no members, then skip (cancel at any time before that)
              </label>
            </div>
          ) : null}
          <fieldset className="card section">
            <legend>Why are these records skipped?</legend>
            <label>
              <span className="hint">
                Required. Travels with each copy as kafka_dlt-exception-message, and is recorded in the audit log.
              </span>
              <textarea
                value={reason}
                onChange={(e) => setReason(e.target.value)}
                rows={2}
                maxLength={1000}
                required
                style={{ width: "100%" }}
                data-testid="skip-reason"
              />
            </label>
          </fieldset>
          <div className="toolbar">
            <button type="submit" className="btn btn-danger" disabled={!ready} data-testid="skip-start">
              {mustWait ? "Wait, then copy and skip" : `Copy ${plan.count} to the DLT and skip`}
            </button>
          </div>
        </div>
      ) : null}
      {error ? (
        <div className="banner banner-error" role="alert" data-testid="skip-error">
          {error}
        </div>
      ) : null}
    </form>
  );
}

async function fetchSkip(id: string): Promise<SkipView> {
  const res = await fetch(skipApiHref(id), { cache: "no-store" });
  const body = (await res.json().catch(() => null)) as {
    ok: boolean;
    data?: SkipView;
    error?: { message: string };
  } | null;
  if (!res.ok || !body?.ok || !body.data)
    throw new Error(body?.error?.message ?? `The skip's progress could not be read (HTTP ${res.status}). Retrying.`);
  return body.data;
}

function SkipJob({
  initial,
  connectionId,
  canCancel,
}: {
  initial: SkipView;
  connectionId: string;
  canCancel: boolean;
}) {
  const q = useQuery({
    queryKey: ["group-skip", initial.id],
    queryFn: () => fetchSkip(initial.id),
    initialData: initial,
    refetchInterval: (x) => (isActive(x.state.data?.state ?? "") ? 1000 : false),
    staleTime: 0,
  });
  const j = q.data;
  const pr = j.progress;
  const router = useRouter();
  const ended = !isActive(j.state);
  const startedActive = useRef(isActive(initial.state));
  useEffect(() => {
    // The page's offsets, lag and stuck state were read before the skip moved the offset: read them again.
    if (ended && startedActive.current) {
      startedActive.current = false;
      router.refresh();
    }
  }, [ended, router]);
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const cancel = () =>
    start(async () => {
      const r = await cancelSkipAction({ jobId: j.id });
      if (!r.ok) setError(r.error.message);
      await q.refetch();
    });
  const dlt = pr.dlt ?? j.params.dlt;
  return (
    <div className="section" data-testid="skip-job" data-state={j.state} data-phase={pr.phase ?? ""}>
      <p>
        <span className="badge">{j.state}</span> Skip of {j.params.count} record{j.params.count === 1 ? "" : "s"} up to
        offset {j.params.upToOffset} to{" "}
        <Link href={dlqHref(connectionId, dlt)} className="mono">
          {dlt}
        </Link>{" "}
        <span className="muted">
          by{" "}
          <span data-testid="skip-by">{j.createdByEmail ?? (j.createdBy ? "a deleted user" : "an unknown user")}</span>,{" "}
          <RelativeTime value={j.createdAt} />: “{j.params.reason}”
        </span>
      </p>
      {pr.phase === "waiting" && isActive(j.state) ? (
        <p data-testid="skip-waiting">
          Waiting for the group to have no members; now:{" "}
          {(pr.members ?? []).map((m) => `${m.clientId} (${m.host})`).join(", ") || "none"}
          {pr.checkedAt ? (
            <>
              {" "}
              <span className="muted">
                (looked <RelativeTime value={pr.checkedAt} />)
              </span>
            </>
          ) : null}
        </p>
      ) : null}
      {j.state === "succeeded" ? (
        <p data-testid="skip-done">
          Committed offset moved from {pr.committedBefore ?? "none"} to{" "}
          <span className="mono">{pr.committedAfter}</span>
          {pr.dltCreated ? "; the DLT was created" : ""}. Copies in the DLT:{" "}
          {(pr.copies ?? []).map((c, i) => (
            <span key={c.offset}>
              {i ? ", " : ""}
              <Link
                href={letterHref(connectionId, dlt, `${c.dltPartition}-${c.dltOffset}`)}
                className="mono"
                data-testid="skip-copy-link"
              >
                offset {c.offset} → {c.dltPartition}-{c.dltOffset}
              </Link>
            </span>
          ))}
          {pr.resumed ? " (the offset was moved by an earlier run; its copies are in the DLT)" : ""}
        </p>
      ) : null}
      {j.state === "failed" ? (
        <div className="banner banner-error" role="alert" data-testid="skip-failed">
          {j.error ?? "The skip failed."}{" "}
          {(pr.copies ?? []).length
            ? `${(pr.copies ?? []).length} cop${(pr.copies ?? []).length === 1 ? "y" : "ies"} already in the DLT were kept; the offset did not move.`
            : "Nothing was skipped."}
        </div>
      ) : null}
      {j.state === "cancelled" ? <p className="muted">Cancelled: nothing was skipped.</p> : null}
      {canCancel && isActive(j.state) && pr.phase !== "skipping" && !j.cancelRequested ? (
        <button type="button" className="btn" onClick={cancel} disabled={pending} data-testid="skip-cancel">
          Cancel
        </button>
      ) : null}
      {q.error ? <p className="muted">{(q.error as Error).message}</p> : null}
      {error ? (
        <div className="banner banner-error" role="alert">
          {error}
        </div>
      ) : null}
    </div>
  );
}
