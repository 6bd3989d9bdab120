import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { notFound } from "next/navigation";
import { type ReactNode, Suspense } from "react";
import { DlqCrumbTrail, DlqHead } from "@/components/dlq/dlq-head";
import { FilterBar } from "@/components/triage/filter-bar";
import { GroupBy } from "@/components/triage/group-by";
import { GroupsTable } from "@/components/triage/groups-table";
import { ScanPanel } from "@/components/triage/scan-panel";
import { IndexingLine } from "@/components/triage/indexing-line";
import { indexingStatus } from "@/lib/triage/indexing-status";
import { TriageLettersTable } from "@/components/triage/triage-letters-table";
import { TriageSkeleton } from "@/components/triage/triage-skeleton";
import { ValuesTable } from "@/components/triage/values-table";
import { MatchCount } from "@/components/triage/match-count";
import { Problem } from "@/components/ui/problem";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor, type Actor, type RequestMeta } from "@/lib/auth/session";
import { type AppError, asAppError } from "@/lib/errors";
import { connectionName, describeDlqHead, type DlqHeadInfo } from "@/lib/dlq/describe-dlq";
import { decodeParam, dlqHref } from "@/lib/dlq/links";
import { formatCount } from "@/lib/format";
import { newDiscardHref } from "@/lib/discard/ui-links";
import { newRedriveHref } from "@/lib/redrive/ui-links";
import { groupRepairHref } from "@/components/repair-group/links";
import { loadConfig } from "@/lib/config";
import { repairEnabled } from "@/lib/repair/policy";
import { newRedriveQuery } from "@/lib/redrive/ui-format";
import { listGroups, listLetters, listRules, listScans, type GroupsResult } from "@/lib/triage/use-cases";
import { LETTER_PAGE_SIZE } from "@/lib/triage/queries";
import {
  appliedFilters,
  EMPTY_VIEW,
  exportHref,
  filterPairs,
  parseTriageParams,
  toLetterFilter,
  triageBase,
  triageHref,
  withFilter,
  type TriageView,
} from "@/lib/triage/view-params";

export const dynamic = "force-dynamic";

type Params = { connectionId: string; queue: string };
type Search = Record<string, string | string[] | undefined>;

export async function generateMetadata({ params }: { params: Promise<Params> }): Promise<Metadata> {
  const { queue } = await params;
  return { title: `Triage · ${decodeParam(queue)}` };
}

export default async function TriagePage({
  params,
  searchParams,
}: {
  params: Promise<Params>;
  searchParams: Promise<Search>;
}) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const parsed = parseTriageParams(await searchParams);
  const view = parsed.ok ? parsed.value : EMPTY_VIEW;
  const actor = await requirePageActor(triageHref(connectionId, queue, view));
  const crumbs = (
    <DlqCrumbTrail name={connectionName(connectionId)} connectionId={connectionId} queue={queue} current="triage" />
  );
  if (!parsed.ok) {
    return (
      <main className="page">
        {crumbs}
        <Problem
          title="This link's options are not valid."
          back={{ href: triageBase(connectionId, queue), label: "← Open triage without filters" }}
          testId="bad-params"
        >
          <p>{parsed.message}</p>
        </Problem>
      </main>
    );
  }

  const meta = await requestMeta();
  // The index reads start at once, alongside the broker's description of the queue (on a first
  // visit it opens the connection, the slowest step); they are awaited inside the Suspense boundary.
  const reads = readIndex(actor, meta, connectionId, queue, view);
  reads.catch(() => undefined); // answered inside the boundary, or not at all on a 404
  let info: DlqHeadInfo;
  try {
    info = await describeDlqHead(actor, meta, { connectionId, queue });
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    if (err.type === "not_found") notFound();
    return problemPage(crumbs, connectionId, queue, err);
  }
  // Settled before anything is sent, so that a DLQ the broker does not have answers 404; the
  // skeleton below is the first paint of every DLQ that exists.
  if (info.missing) notFound();
  return (
    <Suspense fallback={<TriageSkeleton />}>
      <TriageBody
        actor={actor}
        connectionId={connectionId}
        queue={queue}
        view={view}
        info={info}
        reads={reads}
        crumbs={crumbs}
      />
    </Suspense>
  );
}

type IndexReads = {
  groups: GroupsResult;
  letters: Awaited<ReturnType<typeof listLetters>>;
  scans: Awaited<ReturnType<typeof listScans>>;
  ruleText: Record<string, string>;
};

async function readIndex(
  actor: Actor,
  meta: RequestMeta,
  connectionId: string,
  queue: string,
  view: TriageView,
): Promise<IndexReads> {
  const filter = toLetterFilter(connectionId, queue, view);
  const [groups, letters, scans, rules] = await Promise.all([
    listGroups(actor, meta, { connectionId, queue, by: view.by }),
    listLetters(actor, meta, { filter, after: view.after, limit: LETTER_PAGE_SIZE }),
    listScans(actor, meta, { connectionId, queue }),
    listRules(actor, meta),
  ]);
  return { groups, letters, scans, ruleText: Object.fromEntries(rules.rules.map((r) => [r.id, r.description])) };
}

function problemPage(crumbs: ReactNode, connectionId: string, queue: string, err: AppError) {
  const title =
    err.type === "forbidden"
      ? "Your role does not allow this."
      : err.type === "bad_request"
        ? "This view cannot be shown."
        : "The triage index could not be read.";
  return (
    <main className="page">
      {crumbs}
      <Problem title={title} back={{ href: triageBase(connectionId, queue), label: "← Open triage without filters" }}>
        <p>{err.userMessage}</p>
      </Problem>
    </main>
  );
}

async function TriageBody({
  actor,
  connectionId,
  queue,
  view,
  info,
  reads,
  crumbs,
}: {
  actor: Actor;
  connectionId: string;
  queue: string;
  view: TriageView;
  info: DlqHeadInfo;
  reads: Promise<IndexReads>;
  crumbs: ReactNode;
}) {
  let data: IndexReads;
  try {
    data = await reads;
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return problemPage(crumbs, connectionId, queue, err);
  }

  const { groups, letters, scans, ruleText } = data;
  const indexing = await indexingStatus(actor, await requestMeta(), {
    connectionId,
    queue,
    readRisk: info.dlq ? info.dlq.readRisk !== null : null,
  });
  const latest = scans[0] ?? null;
  const lastCompleted = scans.find((s) => s.state === "succeeded") ?? null;
  const groupLabel = (key: string) =>
    groups.by === "group" ? groups.groups.find((g) => g.groupKey === key)?.label : undefined;
  const chips = appliedFilters(view, groupLabel);
  const filtered = chips.length > 0;
  const unfiltered = withFilter(view, {
    group: null,
    exceptionClass: null,
    reason: null,
    origin: null,
    from: null,
    to: null,
    header: null,
    q: null,
    gone: false,
  });
  const canPayload = can(actor.role, "letter:read-payload");
  const redriveBase = can(actor.role, "redrive:sample") ? newRedriveHref(connectionId, queue) : undefined;
  const discardBase = can(actor.role, "discard:run") ? newDiscardHref(connectionId, queue) : undefined;
  // Only a hint: the repair page and its actions check the permission and the switch themselves.
  const repairBase =
    can(actor.role, "letter:repair") && repairEnabled(loadConfig().repair, connectionId, queue)
      ? groupRepairHref(connectionId, queue)
      : undefined;
  const onlyGroup = chips.length === 1 && chips[0].key === "group";

  return (
    <main className="page triage-page">
      <DlqHead actor={actor} connectionId={connectionId} queue={queue} current="triage" scans={scans} info={info} />
      <ScanPanel
        connectionId={connectionId}
        queue={queue}
        canScan={can(actor.role, "triage:scan")}
        latest={latest}
        lastCompleted={lastCompleted}
      />
      <IndexingLine line={indexing} />
      {groups.olderGrouping ? (
        <p className="banner banner-warn" role="status" data-testid="older-grouping">
          These groups were made by an earlier version of the console&apos;s grouping: letters of one failure may be in
          two groups, or named differently from their letter pages, until a complete scan regroups them. Where reading
          costs the DLQ nothing the console starts that scan itself; elsewhere, scan again.
        </p>
      ) : null}

      <section className="section" aria-labelledby="groups-h">
        <div className="toolbar">
          <h2 id="groups-h" style={{ margin: 0 }}>
            Groups
          </h2>
          <span className="hint" data-testid="groups-total">
            {formatCount(groups.total)} letters in the index · {formatCount(groups.groups.length)}{" "}
            {groups.by === "group" ? "groups" : "values"}
          </span>
          <span className="spacer" />
          <GroupBy connectionId={connectionId} queue={queue} view={view} />
        </div>
        {groups.by !== "group" && groups.counting ? (
          <p className="hint" role="status" data-testid="header-counting">
            Counting this header&apos;s values in the background: until that is done, these figures are read from every
            letter, which takes longer on a large DLQ.
          </p>
        ) : null}
        {groups.by === "group" ? (
          <GroupsTable
            connectionId={connectionId}
            queue={queue}
            view={view}
            groups={groups.groups}
            ruleText={ruleText}
            keyboard={!filtered}
            backHref={dlqHref(connectionId, queue)}
            redriveBase={redriveBase}
            repairBase={repairBase}
          />
        ) : (
          <ValuesTable
            connectionId={connectionId}
            queue={queue}
            view={view}
            groups={groups.groups}
            keyboard={!filtered}
            backHref={dlqHref(connectionId, queue)}
          />
        )}
      </section>

      <section className="section" aria-labelledby="letters-h">
        <div className="toolbar">
          <h2 id="letters-h" style={{ margin: 0 }}>
            Letters
          </h2>
          <MatchCount count={letters.count} atLeast={letters.countAtLeast} filtered={filtered} />
          {chips.map((c) => (
            <Link
              key={c.key}
              href={triageHref(connectionId, queue, c.without)}
              className="chip"
              title={`Remove the ${c.label.toLowerCase()} filter`}
              data-testid={`chip-${c.key}`}
            >
              <span className="muted">{c.label}:</span> <span className="chip-value">{c.value}</span>{" "}
              <span aria-hidden="true">×</span>
            </Link>
          ))}
          {filtered ? (
            <Link
              href={triageHref(connectionId, queue, unfiltered)}
              className="btn btn-small btn-quiet"
              data-testid="clear-filters"
            >
              Clear filters
            </Link>
          ) : null}
          <span className="spacer" />
          {redriveBase && letters.count > 0 ? (
            <Link
              className="btn btn-small btn-primary"
              href={`${redriveBase}${newRedriveQuery({ view })}`}
              data-testid="redrive-set"
            >
              {onlyGroup ? "Redrive this group…" : filtered ? "Redrive this filtered set…" : "Redrive all…"}
            </Link>
          ) : null}
          {discardBase && letters.count > 0 ? (
            <Link
              className="btn btn-small btn-danger"
              href={`${discardBase}${newRedriveQuery({ view })}`}
              data-testid="discard-set"
            >
              {onlyGroup ? "Discard this group…" : filtered ? "Discard this filtered set…" : "Discard all…"}
            </Link>
          ) : null}
          <span className="hint">Export this set:</span>
          <a
            className="btn btn-small"
            href={exportHref(connectionId, queue, view, "csv")}
            download
            data-testid="export-csv"
          >
            CSV
          </a>
          <a
            className="btn btn-small"
            href={exportHref(connectionId, queue, view, "json")}
            download
            data-testid="export-json"
          >
            JSON
          </a>
          {canPayload ? (
            <a
              className="btn btn-small"
              href={exportHref(connectionId, queue, view, "json", true)}
              download
              title="JSON with the payloads (your role may read them); the export is audited"
              data-testid="export-json-payload"
            >
              JSON + payloads
            </a>
          ) : null}
        </div>
        <FilterBar key={JSON.stringify(filterPairs(view))} connectionId={connectionId} queue={queue} view={view} />
        <TriageLettersTable
          connectionId={connectionId}
          queue={queue}
          letters={letters.letters}
          keyboard={filtered}
          backHref={triageHref(connectionId, queue, unfiltered)}
          redriveBase={redriveBase}
          discardBase={discardBase}
        />
        <nav className="pager toolbar" aria-label="Pages" data-testid="triage-pager">
          {view.after ? (
            <Link
              className="btn btn-small"
              href={triageHref(connectionId, queue, { ...view, after: null })}
              data-testid="page-first"
            >
              ← First page
            </Link>
          ) : (
            <span className="btn btn-small" aria-disabled="true">
              ← First page
            </span>
          )}
          {letters.nextCursor ? (
            <Link
              className="btn btn-small"
              href={triageHref(connectionId, queue, { ...view, after: letters.nextCursor })}
              data-testid="page-next"
            >
              Next →
            </Link>
          ) : (
            <span className="btn btn-small" aria-disabled="true">
              Next →
            </span>
          )}
          <span className="hint">
            50 a page, newest first · <span className="kbd">j</span>/<span className="kbd">k</span> move ·{" "}
            <span className="kbd">Enter</span> open · <span className="kbd">/</span> search ·{" "}
            <span className="kbd">Esc</span> back
          </span>
        </nav>
      </section>
    </main>
  );
}
