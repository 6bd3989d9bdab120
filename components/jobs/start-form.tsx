"use client";

import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useState, useTransition, type ReactNode } from "react";
import type { ActionResult } from "@/lib/errors";
import { describeScope, type UiSelection } from "@/lib/redrive/ui-format";
import type { JobKind } from "./operation-job";

type StartError = { message: string; stale: boolean };

/**
 * What a form that starts a discard or a redrive shares: the preview and its count (counted again on
 * demand with `plan`), the confirmation tick, and the error. A stale count (`conflict:count`: the set
 * changed since the preview) unticks the confirmation and offers to count again. A start that
 * succeeds opens the new job's page.
 */
export function useStartForm<T extends { count: number }>(
  initial: T,
  plan: () => Promise<ActionResult<T>>,
  jobHref: (id: string) => string,
) {
  const router = useRouter();
  const [preview, setPreview] = useState(initial);
  const [confirmed, setConfirmed] = useState(false);
  const [error, setError] = useState<StartError | null>(null);
  const [pending, transition] = useTransition();

  const recount = () => {
    setError(null);
    transition(async () => {
      const r = await plan();
      if (!r.ok) return setError({ message: r.error.message, stale: false });
      setPreview(r.data);
      setConfirmed(false);
    });
  };

  const start = (run: () => Promise<ActionResult<{ id: string }>>) => {
    setError(null);
    transition(async () => {
      const r = await run();
      if (!r.ok) {
        setError({ message: r.error.message, stale: r.error.code === "conflict:count" });
        if (r.error.code === "conflict:count") setConfirmed(false);
        return;
      }
      router.push(jobHref(r.data.id));
    });
  };

  return { preview, count: preview.count, confirmed, setConfirmed, error, pending, recount, start };
}

/** The scope card's head: "You are about to <kind>", the exact scope and count, and count again / back. `children` follow (notes, warnings). */
export function ScopeCard({
  kind,
  selection,
  count,
  queue,
  groupLabel,
  onRecount,
  pending,
  back,
  children,
}: {
  kind: JobKind;
  selection: UiSelection;
  count: number;
  queue: string;
  groupLabel: string | null;
  onRecount: () => void;
  pending: boolean;
  back: { href: string; label: string };
  children?: ReactNode;
}) {
  return (
    <section className="card redrive-scope" aria-label="Scope">
      <div className="hint">You are about to {kind}</div>
      <p className="redrive-scope-text" data-testid={`${kind}-scope`} data-count={count}>
        <strong>{describeScope(selection, count, queue, groupLabel)}</strong>
      </p>
      <p className="hint">
        Counted in the triage index just now.{" "}
        <button
          type="button"
          className="btn btn-small btn-quiet"
          onClick={onRecount}
          disabled={pending}
          data-testid={`${kind}-recount`}
        >
          Count again
        </button>{" "}
        <Link href={back.href}>{back.label}</Link>
      </p>
      {children}
    </section>
  );
}

/** A refused start in the operator's words; a stale count offers to count again. */
export function StartErrorNote({
  kind,
  error,
  onRecount,
  pending,
}: {
  kind: JobKind;
  error: StartError | null;
  onRecount: () => void;
  pending: boolean;
}) {
  if (!error) return null;
  return (
    <div className="form-error" role="alert" data-testid={`${kind}-error`}>
      {error.message}{" "}
      {error.stale ? (
        <button
          type="button"
          className="btn btn-small"
          onClick={onRecount}
          disabled={pending}
          data-testid={`${kind}-replan`}
        >
          Count again and review
        </button>
      ) : null}
    </div>
  );
}
