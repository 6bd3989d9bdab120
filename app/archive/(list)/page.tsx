import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { ArchiveTable } from "@/components/archive/archive-table";
import { ArchiveDlqFilter } from "@/components/archive/dlq-filter";
import { Problem } from "@/components/ui/problem";
import { SlashFocus } from "@/components/ui/slash-focus";
import { UtcRangeFields } from "@/components/ui/utc-range-fields";
import { shortOperation } from "@/components/archive/repaired";
import { archiveExportHref, archiveHref, parseArchiveParams } from "@/lib/archive/params";
import { archiveRetentionDays } from "@/lib/archive/store";
import { listArchive } from "@/lib/archive/use-cases";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { asAppError } from "@/lib/errors";
import { formatCount } from "@/lib/format";
import { firstParam, type SearchParams } from "@/lib/search-params";

export const metadata: Metadata = { title: "Archive" };
export const dynamic = "force-dynamic";

/** Discarded letters and repaired originals kept in the archive: filters (DLQ, time, who, why, state, operation), export, undo (admins). */
export default async function ArchivePage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  const parsed = parseArchiveParams(sp);
  const actor = await requirePageActor(archiveHref(parsed.raw));
  const raw = parsed.raw;
  const after = firstParam(sp, "after") || null;
  let data: Awaited<ReturnType<typeof listArchive>> | null = null;
  let problem: { title: string; message: string } | null = parsed.ok
    ? null
    : { title: "The filter is not valid.", message: parsed.message };
  if (parsed.ok) {
    try {
      data = await listArchive(actor, await requestMeta(), { filter: parsed.filter, after, limit: 50 });
    } catch (e) {
      const err = asAppError(e);
      if (!err) throw e;
      problem = {
        title:
          err.type === "forbidden"
            ? "Your role cannot read the archive."
            : err.type === "bad_request"
              ? "The filter is not valid."
              : "The archive could not be read.",
        message: err.userMessage,
      };
    }
  }
  const canPayload = can(actor.role, "letter:read-payload");
  return (
    <main className="page">
      <div className="page-head">
        <h1>Archive</h1>
        <span className="meta">
          Discarded letters and the originals of repaired ones, newest first. Each is kept {archiveRetentionDays()} days
          after its discard (DLQ_ARCHIVE_RETENTION_DAYS), payload encrypted.
        </span>
      </div>
      <SlashFocus targetId="archive-q" />
      <form method="get" action="/archive" className="form-row card" data-testid="archive-filter">
        <ArchiveDlqFilter dlqs={data?.dlqs ?? []} connectionId={raw.connectionId ?? ""} queue={raw.queue ?? ""} />
        <UtcRangeFields from={raw.from} to={raw.to} />
        <label>
          Discarded by
          <input name="actor" defaultValue={raw.actor} placeholder="alice@" style={{ width: 150 }} />
        </label>
        <label>
          Reason contains
          <input name="reason" defaultValue={raw.reason} style={{ width: 160 }} data-testid="archive-filter-reason" />
        </label>
        <label>
          State
          <select name="state" defaultValue={raw.state ?? ""}>
            <option value="">any</option>
            <option value="archived">archived</option>
            <option value="restored">put back</option>
          </select>
        </label>
        <label>
          Letter, message id, SHA-256 or class
          <input id="archive-q" name="q" defaultValue={raw.q} style={{ width: 200 }} />
        </label>
        {/* The operation has no field of its own (it arrives from a discard or repair link): kept across a new filter, removed by its chip. */}
        {raw.operation ? <input type="hidden" name="operation" value={raw.operation} /> : null}
        <button type="submit" className="btn btn-primary" data-testid="archive-filter-submit">
          Filter
        </button>
        <Link href="/archive" className="btn">
          Clear
        </Link>
      </form>
      {raw.operation ? (
        <div className="toolbar" data-testid="archive-operation-filter">
          <span className="hint">Only the letters of</span>
          <Link
            href={archiveHref({ ...raw, operation: undefined })}
            className="chip"
            title={`Operation ${raw.operation}: remove this filter`}
            aria-label={`Remove the filter by operation ${raw.operation}`}
            data-testid="archive-operation-chip"
          >
            <span className="chip-value">operation {shortOperation(raw.operation)}</span>{" "}
            <span aria-hidden="true">×</span>
          </Link>
        </div>
      ) : null}
      {problem ? (
        <Problem title={problem.title} back={{ href: "/archive", label: "← The whole archive" }}>
          <p>{problem.message}</p>
        </Problem>
      ) : null}
      {data ? (
        <>
          <div className="toolbar">
            <strong data-testid="archive-count" data-count={data.count}>
              {formatCount(data.count)} archived {data.count === 1 ? "letter" : "letters"}
            </strong>
            <span className="spacer" />
            <span className="hint">Export this set:</span>
            <a className="btn btn-small" href={archiveExportHref(raw, "csv")} download data-testid="archive-export-csv">
              CSV
            </a>
            <a
              className="btn btn-small"
              href={archiveExportHref(raw, "json")}
              download
              data-testid="archive-export-json"
            >
              JSON
            </a>
            {canPayload ? (
              <a
                className="btn btn-small"
                href={archiveExportHref(raw, "json", true)}
                download
                title="JSON with the payloads, masked by the rules for your role; the export is audited"
                data-testid="archive-export-json-payload"
              >
                JSON + payloads
              </a>
            ) : null}
          </div>
          <ArchiveTable
            rows={data.rows}
            raw={raw}
            canRestore={can(actor.role, "archive:restore")}
            canPayload={canPayload}
          />
          <nav className="pager toolbar" aria-label="Pages">
            {after ? (
              <Link className="btn btn-small" href={archiveHref(raw)}>
                ← First page
              </Link>
            ) : null}
            {data.nextCursor ? (
              <Link className="btn btn-small" href={archiveHref(raw, data.nextCursor)} data-testid="archive-next">
                Next →
              </Link>
            ) : null}
            <span className="hint">50 a page, newest first.</span>
          </nav>
        </>
      ) : null}
    </main>
  );
}
