"use client";

import { useRouter } from "next/navigation";
import { useEffect, useState, useTransition } from "react";
import { confirmRiskyReadAction, startSafeMoveAction } from "@/app/dlqs/[connectionId]/[queue]/actions";
import type { SafeMovePlan } from "@/lib/brokers/contract/safe-move";
import { formatCount } from "@/lib/format";

/**
 * The two choices on a DLQ whose reads cost letters. Each names its exact scope and cost and asks
 * once more before it runs; each is one act on the server (one move, or one read). While a move or
 * read runs, the page refreshes itself: a refresh reads nothing from the broker.
 */
export function RiskyReadActions(props: {
  connectionId: string;
  queue: string;
  depth: number | null;
  plan: SafeMovePlan | null;
  planProblem: string | null;
  canMove: boolean;
  canRead: boolean;
  busy: boolean;
  projected: number | null;
  limit: number | null;
  hasSnapshot: boolean;
}) {
  const { connectionId, queue, depth, plan } = props;
  const router = useRouter();
  const [asking, setAsking] = useState<"move" | "read" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();

  useEffect(() => {
    if (!props.busy) return;
    const t = setInterval(() => router.refresh(), 1500);
    return () => clearInterval(t);
  }, [props.busy, router]);

  const run = (what: "move" | "read") =>
    start(async () => {
      setError(null);
      const r =
        what === "move"
          ? await startSafeMoveAction({ connectionId, queue, target: plan!.target })
          : await confirmRiskyReadAction({ connectionId, queue });
      if (!r.ok) setError(r.error.message);
      else setAsking(null);
      router.refresh();
    });

  const letters = depth === null ? "the" : formatCount(depth);
  const cost =
    props.projected === 0
      ? `The last read saw no letter at ${props.limit !== null ? `the limit of ${props.limit}` : "the limit"}: this read loses none, and brings every letter one read closer to it.`
      : props.projected !== null
        ? `The last read saw ${formatCount(props.projected)} letter${props.projected === 1 ? "" : "s"} at ${props.limit !== null ? `the limit of ${props.limit}` : "the limit"}: this read would lose ${props.projected === 1 ? "it" : "them"}, and brings every other letter one read closer.`
        : props.hasSnapshot
          ? "The last read did not record how close the letters are to the limit: letters retried before may be at it, and this read would lose them."
          : "Nothing was read before, so the console cannot tell how close the letters are to the limit: letters retried before may be at it, and this read would lose them.";

  if (depth === 0 && !props.busy) {
    return (
      <p className="hint" data-testid="risk-empty">
        The DLQ is empty now: there is nothing to move or read.
      </p>
    );
  }
  if (!props.canMove && !props.canRead) {
    return (
      <p data-testid="risk-not-allowed">
        <strong>Your role cannot move or read these letters.</strong> Ask an operator or admin.
      </p>
    );
  }
  return (
    <div className="risky-choices" data-testid="risk-choices">
      {plan ? (
        <div className="card" data-testid="choice-safe-move">
          <h3>
            Move the letters to safety first <span className="badge badge-ok">recommended</span>
          </h3>
          <p>
            Moves all {letters} letters to{" "}
            <span className="mono" data-testid="safe-target">
              {plan.target}
            </span>
            {plan.targetExists ? " (it exists already)" : " (created by the move)"}: {plan.description}
          </p>
          <details>
            <summary>Broker permissions this needs</summary>
            <ul>
              {plan.permissions.map((p) => (
                <li key={p} className="mono">
                  {p}
                </li>
              ))}
            </ul>
          </details>
          {!props.canMove ? (
            <p className="hint">Moving letters needs the operator or admin role.</p>
          ) : asking === "move" ? (
            <p>
              <strong>
                Move {letters} letters from <span className="mono">{queue}</span> to{" "}
                <span className="mono">{plan.target}</span>?
              </strong>{" "}
              <button
                type="button"
                className="btn btn-primary"
                disabled={pending || props.busy}
                onClick={() => run("move")}
                data-testid="safe-move-confirm"
              >
                {pending ? "Starting…" : `Move ${letters} letters`}
              </button>{" "}
              <button type="button" className="btn" onClick={() => setAsking(null)}>
                Cancel
              </button>
            </p>
          ) : (
            <button
              type="button"
              className="btn btn-primary"
              disabled={props.busy}
              onClick={() => setAsking("move")}
              data-testid="safe-move-start"
            >
              Move {letters} letters to {plan.target}…
            </button>
          )}
        </div>
      ) : props.planProblem ? (
        <p className="hint" data-testid="safe-move-unavailable">
          Moving to safety is not available right now: {props.planProblem}
        </p>
      ) : null}
      <div className="card" data-testid="choice-read-once">
        <h3>Read once into a snapshot</h3>
        <p data-testid="read-cost">
          Reads the DLQ once and hands every letter back; the broker counts that as a delivery for each of them. {cost}
        </p>
        {!props.canRead ? (
          <p className="hint">Reading needs the operator or admin role.</p>
        ) : asking === "read" ? (
          <p>
            <strong>Read {letters} letters once, at that cost?</strong>{" "}
            <button
              type="button"
              className="btn btn-danger"
              disabled={pending || props.busy}
              onClick={() => run("read")}
              data-testid="confirm-risky-read"
            >
              {pending ? "Starting…" : "Read once"}
            </button>{" "}
            <button type="button" className="btn" onClick={() => setAsking(null)}>
              Cancel
            </button>{" "}
            <span className="hint">Your confirmation is recorded in the audit log.</span>
          </p>
        ) : (
          <button
            type="button"
            className="btn btn-danger"
            disabled={props.busy}
            onClick={() => setAsking("read")}
            data-testid="read-once-start"
          >
            {props.hasSnapshot ? "Read again…" : "Read once…"}
          </button>
        )}
      </div>
      {error ? (
        <p className="form-error" role="alert" data-testid="risky-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
