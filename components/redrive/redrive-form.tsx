"use client";

import Link from "@/components/ui/link";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { planRedriveAction, startRedriveAction } from "@/app/dlqs/[connectionId]/[queue]/redrive/actions";
import { ScopeCard, StartErrorNote, useStartForm } from "@/components/jobs/start-form";
import type { RedrivePreview, TargetReadersView } from "@/lib/redrive/use-cases";
import { confirmPhrase, type UiSelection } from "@/lib/redrive/ui-format";
import { FixAndStages, useStageFields } from "./stage-fields";
import { redriveJobHref } from "@/lib/redrive/ui-links";

/**
 * Who consumes where the sample would go, as the broker tells it: a sample is clean only when a
 * reader took it, so a target nobody reads is said plainly before anything starts.
 */
function TargetReadersNote({ readers }: { readers: TargetReadersView[] }) {
  if (readers.length === 0) return null;
  return (
    <section className="target-readers" aria-label="Who reads the target">
      {readers.map((x) =>
        x.warning ? (
          <div
            key={x.target}
            className="banner banner-warn"
            role="alert"
            data-testid="target-readers-warning"
            data-target={x.target}
          >
            {x.warning}
          </div>
        ) : (
          <p
            key={x.target}
            className="hint"
            data-testid="target-readers"
            data-target={x.target}
            data-count={x.readers?.count ?? ""}
          >
            {x.readers ? x.readers.summary : x.error}
            {x.readers?.names.length ? (
              <span className="mono block">
                {x.readers.names.slice(0, 5).join(", ")}
                {x.readers.names.length > 5 ? ` and ${x.readers.names.length - 5} more` : ""}
              </span>
            ) : null}
          </p>
        ),
      )}
    </section>
  );
}

/**
 * The redrive form: the exact scope and count (from planRedrive), target, stated fix, sample, watch,
 * rate, count limit and parking, breaker (folded), and a confirmation that repeats the count.
 * A stale count (the set changed since the preview) offers to count again. A named target or
 * parking queue is checked again shortly after it changes: where payloads would be less protected
 * than in the DLQ the form says so, and only an admin can confirm going on.
 */
export function RedriveForm({
  connectionId,
  queue,
  selection,
  initial,
  groupLabel,
  origins,
  backHref,
}: {
  connectionId: string;
  queue: string;
  selection: UiSelection;
  initial: RedrivePreview;
  groupLabel: string | null;
  origins: string[];
  backHref: string;
}) {
  const [targetKind, setTargetKind] = useState<"origin" | "queue">("origin");
  const [targetName, setTargetName] = useState("");
  const [limit, setLimit] = useState("3");
  const [parkKind, setParkKind] = useState<"mark" | "queue">("mark");
  const [parkName, setParkName] = useState("");
  const [breakerPct, setBreakerPct] = useState("10");
  const [breakerWindow, setBreakerWindow] = useState("200");
  const [targetConfirmed, setTargetConfirmed] = useState(false);
  const target =
    targetKind === "queue" && targetName.trim()
      ? { kind: "queue" as const, name: targetName.trim() }
      : { kind: "origin" as const };
  const parking =
    parkKind === "queue" && parkName.trim()
      ? { kind: "queue" as const, name: parkName.trim() }
      : { kind: "mark" as const };
  const { preview, count, confirmed, setConfirmed, error, pending, recount, start } = useStartForm(
    initial,
    () => planRedriveAction({ connectionId, queue, selection, target, parking }),
    (id) => redriveJobHref(connectionId, queue, id),
  );
  // The destinations' protection is checked by planRedrive: ask again once typing pauses.
  const destKey = JSON.stringify([target, parking]);
  const checkedKey = useRef(destKey);
  // biome-ignore lint/correctness/useExhaustiveDependencies: keyed on destKey only; recount is this render's closure over exactly those destinations, and a new closure every render would restart the pause
  useEffect(() => {
    if (destKey === checkedKey.current) return;
    const t = setTimeout(() => {
      checkedKey.current = destKey;
      setTargetConfirmed(false);
      recount();
    }, 600);
    return () => clearTimeout(t);
  }, [destKey]);
  const protection = preview.targetProtection;
  // Who reads the target, for the target the preview was made for (a typed name is looked at once typing pauses).
  const readers =
    targetKind === "queue"
      ? preview.readers.filter((x) => x.target === targetName.trim())
      : preview.target.startsWith("each letter")
        ? preview.readers
        : [];

  const stages = useStageFields(count);
  const { fix, sample } = stages;
  const limitN = Number(limit);
  const pct = Number(breakerPct);
  const windowN = Number(breakerWindow);
  const problems: string[] = [...stages.problems];
  if (!Number.isInteger(limitN) || limitN < 1 || limitN > 100) problems.push("Redrive-count limit: 1 to 100.");
  if (targetKind === "queue" && !targetName.trim())
    problems.push("Name the target queue, or send letters back to their origin.");
  if (parkKind === "queue" && !parkName.trim())
    problems.push("Name the parking queue, or leave parked letters in the DLQ.");
  if (!(pct > 0 && pct <= 100) || !Number.isInteger(windowN) || windowN < 1)
    problems.push("Breaker: a share from 1 to 100 % over a window of at least 1 letter.");
  if (protection.message && !protection.canConfirm)
    problems.push("A destination is less protected than this DLQ: choose another, or ask an admin.");
  const ready = count > 0 && problems.length === 0 && confirmed && (!protection.message || targetConfirmed);
  const phrase = confirmPhrase(count);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!ready || !sample) return;
    start(() =>
      startRedriveAction({
        connectionId,
        queue,
        selection,
        target: targetKind === "queue" ? { kind: "queue", name: targetName.trim() } : { kind: "origin" },
        confirmLessProtected: Boolean(protection.message) && targetConfirmed,
        fix: fix.trim(),
        confirmedCount: count,
        sample,
        watchSeconds: stages.watchSeconds,
        rate: stages.rate,
        redriveLimit: limitN,
        parking: parkKind === "queue" ? { kind: "queue", name: parkName.trim() } : { kind: "mark" },
        breakerThreshold: pct / 100,
        breakerWindow: windowN,
      }),
    );
  };

  return (
    <form className="redrive-form" onSubmit={submit} data-testid="redrive-form" noValidate>
      <ScopeCard
        kind="redrive"
        selection={selection}
        count={count}
        queue={queue}
        groupLabel={groupLabel}
        onRecount={recount}
        pending={pending}
        back={{ href: backHref, label: "← Back to triage" }}
      >
        {preview.warnings.map((w) => (
          <div key={w} className="banner banner-warn" data-testid="redrive-warning">
            {w}
          </div>
        ))}
        {preview.nativeMoveNote ? (
          <div className="banner banner-info" data-testid="redrive-native-note">
            <strong>Trade-off:</strong> {preview.nativeMoveNote}
          </div>
        ) : null}
      </ScopeCard>

      <fieldset className="card">
        <legend>Target</legend>
        <label className="radio">
          <input
            type="radio"
            name="target"
            checked={targetKind === "origin"}
            onChange={() => setTargetKind("origin")}
            data-testid="target-origin"
          />
          <span>
            Back to {preview.target.startsWith("each letter") ? preview.target : "each letter's origin"}
            <span className="hint block">
              Each letter goes back to where it failed, as the broker recorded it (on RabbitMQ the queue named in its
              x-death history; on SQS its source queue; on Kafka its original topic).
              {origins.length ? (
                <>
                  {" "}
                  Here:{" "}
                  <span className="mono" data-testid="target-origins">
                    {origins.slice(0, 5).join(", ")}
                  </span>
                  {origins.length > 5 ? ` and ${origins.length - 5} more` : ""}.
                </>
              ) : null}
            </span>
          </span>
        </label>
        <label className="radio">
          <input
            type="radio"
            name="target"
            checked={targetKind === "queue"}
            onChange={() => setTargetKind("queue")}
            data-testid="target-named"
          />
          <span>Another queue or topic</span>
          <input
            value={targetName}
            onChange={(e) => {
              setTargetName(e.target.value);
              setTargetKind("queue");
            }}
            placeholder="orders.retry"
            className="mono"
            aria-label="Target queue or topic"
            data-testid="target-name"
          />
        </label>
        <TargetReadersNote readers={readers} />
      </fieldset>

      <FixAndStages
        s={stages}
        testIdPrefix="redrive"
        stage1Verb="redrives"
        stage2Verb="moves"
        placeholder="orders-service 2.14.1 (ORD-812) raises the payment client timeout to 10 s"
      />

      <fieldset className="card">
        <legend>Letters that keep failing</legend>
        <div className="form-row">
          <label>
            Park after (redrives)
            <input
              type="number"
              min={1}
              max={100}
              value={limit}
              onChange={(e) => setLimit(e.target.value)}
              style={{ width: 90 }}
              data-testid="redrive-limit"
            />
          </label>
          <label className="radio">
            <input
              type="radio"
              name="parking"
              checked={parkKind === "mark"}
              onChange={() => setParkKind("mark")}
              data-testid="parking-mark"
            />
            <span>Leave them in the DLQ, marked parked</span>
          </label>
          <label className="radio">
            <input
              type="radio"
              name="parking"
              checked={parkKind === "queue"}
              onChange={() => setParkKind("queue")}
              data-testid="parking-queue"
            />
            <span>Move them to</span>
            <input
              value={parkName}
              onChange={(e) => {
                setParkName(e.target.value);
                setParkKind("queue");
              }}
              placeholder="orders.parking"
              className="mono"
              aria-label="Parking queue"
              data-testid="parking-name"
            />
          </label>
        </div>
        <p className="hint">
          A letter that has already been redriven this many times is parked instead of going round again.
        </p>
      </fieldset>

      <details className="card redrive-advanced">
        <summary>
          Circuit breaker (advanced): pause when {breakerPct || "?"} % of the last {breakerWindow || "?"} letters come
          back
        </summary>
        <div className="form-row" style={{ marginTop: 8 }}>
          <label>
            Threshold (%)
            <input
              type="number"
              min={1}
              max={100}
              value={breakerPct}
              onChange={(e) => setBreakerPct(e.target.value)}
              style={{ width: 90 }}
              data-testid="redrive-breaker"
            />
          </label>
          <label>
            Window (letters)
            <input
              type="number"
              min={1}
              value={breakerWindow}
              onChange={(e) => setBreakerWindow(e.target.value)}
              style={{ width: 110 }}
              data-testid="redrive-breaker-window"
            />
          </label>
        </div>
      </details>

      <section className="card redrive-confirm" aria-label="Confirm">
        {problems.length && fix.length ? (
          <ul className="hint redrive-problems" data-testid="redrive-problems">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        ) : null}
        {protection.message ? (
          <div className="banner banner-warn" role="alert" data-testid="redrive-target-warning">
            {protection.message}
            {protection.canConfirm ? (
              <label className="radio">
                <input
                  type="checkbox"
                  checked={targetConfirmed}
                  onChange={(e) => setTargetConfirmed(e.target.checked)}
                  data-testid="redrive-target-confirm"
                />
                <span>
                  As an admin, I confirm moving these letters where their payloads are less protected. Recorded in the
                  audit log.
                </span>
              </label>
            ) : (
              <p className="hint">Only an admin can confirm this.</p>
            )}
          </div>
        ) : null}
        <label className="radio">
          <input
            type="checkbox"
            checked={confirmed}
            onChange={(e) => setConfirmed(e.target.checked)}
            disabled={count === 0}
            data-testid="redrive-confirm"
          />
          <span>
            <strong>{phrase}</strong> from <span className="mono">{queue}</span>. I have checked the scope and the fix
            is deployed.
          </span>
        </label>
        <div className="toolbar">
          <button
            type="submit"
            className="btn btn-primary"
            disabled={!ready || pending}
            data-testid="redrive-submit"
            title={
              ready
                ? undefined
                : (problems[0] ?? (count === 0 ? "Nothing to redrive." : "Tick the confirmation first."))
            }
          >
            {pending ? "Starting…" : `${phrase}: start the sample`}
          </button>
          <Link href={backHref} className="btn btn-quiet">
            Cancel
          </Link>
          <span className="hint">The start is recorded in the audit log with the fix you stated.</span>
        </div>
        <StartErrorNote kind="redrive" error={error} onRecount={recount} pending={pending} />
      </section>
    </form>
  );
}
