import { DlqCrumbTrail } from "@/components/dlq/dlq-head";
import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { Problem } from "@/components/ui/problem";
import { asAppError } from "@/lib/errors";
import { connectionName } from "@/lib/dlq/describe-dlq";
import { decodeParam } from "@/lib/dlq/links";
import type { JobKind } from "./operation-job";

/** Breadcrumbs of a page under one DLQ: DLQs / connection name / queue / `children`. */
export function DlqCrumbs({
  connectionId,
  queue,
  children,
}: {
  connectionId: string;
  queue: string;
  children: ReactNode;
}) {
  return (
    <DlqCrumbTrail name={connectionName(connectionId)} connectionId={connectionId} queue={queue}>
      {children}
    </DlqCrumbTrail>
  );
}

/** A page that shows only a problem, under its breadcrumbs. */
export function ProblemPage({
  crumbs,
  title,
  message,
  back,
  testId,
}: {
  crumbs: ReactNode;
  title: string;
  message?: string;
  back: { href: string; label: string };
  testId?: string;
}) {
  return (
    <main className="page">
      {crumbs}
      <Problem title={title} back={back} testId={testId}>
        {message ? <p>{message}</p> : null}
      </Problem>
    </main>
  );
}

/**
 * Title and message for a job that could not be read; a job that does not exist (or that the role
 * may not see) is a 404; anything but an AppError is thrown on (to the error page).
 */
export function jobReadProblem(kind: JobKind, e: unknown): { title: string; message: string } {
  const err = asAppError(e);
  if (!err) throw e;
  if (err.type === "not_found") notFound();
  const title = err.type === "forbidden" ? "Your role does not allow this." : `The ${kind} could not be read.`;
  return { title, message: err.userMessage };
}

type Search = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? "";

/** A job page's route params, decoded, and its ledger view from the URL: `state` (one of `states`, else all) and the cursor `after`. */
export async function jobPageParams(
  params: Promise<{ connectionId: string; queue: string; jobId: string }>,
  searchParams: Promise<Search>,
  states: readonly string[],
): Promise<{ connectionId: string; queue: string; jobId: string; state: string | null; after: number | null }> {
  const p = await params;
  const sp = await searchParams;
  const stateParam = one(sp.state);
  const afterN = Number.parseInt(one(sp.after), 10);
  return {
    connectionId: decodeParam(p.connectionId),
    queue: decodeParam(p.queue),
    jobId: decodeParam(p.jobId),
    state: states.includes(stateParam) ? stateParam : null,
    after: Number.isFinite(afterN) && afterN > 0 ? afterN : null,
  };
}

/**
 * A job page's job, read for the page, or the problem page to show instead: the job could not be
 * read (`back` leads away), or it belongs to another DLQ than the URL's (a link opens it there).
 */
export async function readJobForPage<D, J extends { connectionId: string; queue: string }>(o: {
  kind: JobKind;
  crumbs: ReactNode;
  connectionId: string;
  queue: string;
  read: () => Promise<D>;
  jobOf: (data: D) => J;
  back: { href: string; label: string };
  elsewhere: (job: J) => string;
}): Promise<{ ok: true; data: D } | { ok: false; problem: ReactNode }> {
  let data: D;
  try {
    data = await o.read();
  } catch (e) {
    return { ok: false, problem: <ProblemPage crumbs={o.crumbs} {...jobReadProblem(o.kind, e)} back={o.back} /> };
  }
  const job = o.jobOf(data);
  if (job.connectionId !== o.connectionId || job.queue !== o.queue) {
    return {
      ok: false,
      problem: (
        <ProblemPage
          crumbs={o.crumbs}
          title={`This ${o.kind} belongs to another DLQ.`}
          back={{ href: o.elsewhere(job), label: "→ Open it there" }}
        />
      ),
    };
  }
  return { ok: true, data };
}
