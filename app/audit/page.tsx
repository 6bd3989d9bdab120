import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { AuditTable } from "@/components/audit/audit-table";
import { Problem } from "@/components/ui/problem";
import { SlashFocus } from "@/components/ui/slash-focus";
import { UtcRangeFields } from "@/components/ui/utc-range-fields";
import { can } from "@/lib/auth/permissions";
import { authorizePage } from "@/lib/auth/authorize-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { parseAuditFilter, viewAudit, type AuditPage } from "@/lib/audit-log/use-cases";
import { asAppError } from "@/lib/errors";
import { VerifyChainButton } from "@/components/audit/verify-chain-button";
import { AuditActionSelect } from "@/components/audit/action-select";
import { AuditCategoryFilter } from "@/components/audit/category-filter";
import { groupAuditActions } from "@/lib/audit-log/categories";
import { filterSearch, firstParam, readFilters, type SearchParams, withQuery } from "@/lib/search-params";

export const metadata: Metadata = { title: "Audit" };
export const dynamic = "force-dynamic";

const FIELDS = ["actor", "action", "queue", "connectionId", "outcome", "from", "to", "category"] as const;

export default async function AuditPageView({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  const raw = readFilters(sp, FIELDS);
  const query = filterSearch(raw, FIELDS);
  const actor = await requirePageActor(withQuery("/audit", query));
  // Before anything streams, so a refusal answers 403 (./forbidden.tsx); audited as audit.view.
  await authorizePage(actor, "audit:read", { action: "audit.view", meta: await requestMeta() });
  const before = firstParam(sp, "before") || undefined;

  let page: AuditPage | null = null;
  let problem: { title: string; message: string } | null = null;
  try {
    const filter = parseAuditFilter(raw, { defaultCategories: true });
    page = await viewAudit(actor, await requestMeta(), { filter, before });
  } catch (e) {
    if (asAppError(e)?.type === "bad_request")
      problem = { title: "The filter is not valid.", message: asAppError(e)!.userMessage };
    else throw e;
  }

  const olderHref = page?.nextCursor
    ? withQuery("/audit", filterSearch(raw, FIELDS, [["before", page.nextCursor]]))
    : null;
  // The export serves what the page shows: the default view's categories are named in its link.
  const exportQuery = new URLSearchParams(query);
  if (!raw.action && !raw.category) exportQuery.set("category", "operations,administration");
  const exportHref = (format: "csv" | "json") =>
    `/api/audit/export?${new URLSearchParams([["format", format], ...exportQuery])}`;
  const actionGroups = groupAuditActions(page?.actions ?? []);

  return (
    <main className="page">
      <div className="page-head">
        <h1>Audit log</h1>
        <span className="meta">
          Newest first. Times in UTC on hover. Every view and export of this log is itself recorded.
        </span>
      </div>
      <SlashFocus targetId="audit-actor" />
      <div className="toolbar">
        <AuditCategoryFilter current={raw.action ? null : (raw.category ?? "")} query={query} />
        <span className="hint">
          {raw.action
            ? "An action is chosen: every category."
            : raw.category
              ? null
              : "Sign-ins, views and reveals are under Access."}
        </span>
      </div>
      <form method="get" action="/audit" className="form-row card" data-testid="audit-filter">
        <label>
          Actor (email contains)
          <input id="audit-actor" name="actor" defaultValue={raw.actor} placeholder="alice@" style={{ width: 180 }} />
        </label>
        <label htmlFor="audit-action">
          Action
          <AuditActionSelect value={raw.action ?? ""} groups={actionGroups} />
        </label>
        <label>
          Queue
          <input name="queue" defaultValue={raw.queue} style={{ width: 160 }} />
        </label>
        <label>
          Outcome
          <select name="outcome" defaultValue={raw.outcome}>
            <option value="">any</option>
            <option value="success">success</option>
            <option value="denied">denied</option>
            <option value="failure">failure</option>
          </select>
        </label>
        <UtcRangeFields from={raw.from} to={raw.to} />
        {raw.connectionId ? <input type="hidden" name="connectionId" value={raw.connectionId} /> : null}
        {raw.category ? <input type="hidden" name="category" value={raw.category} /> : null}
        <button type="submit" className="btn btn-primary">
          Filter
        </button>
        <Link href="/audit" className="btn">
          Clear
        </Link>
      </form>
      {problem ? (
        <Problem title={problem.title}>
          <p>{problem.message}</p>
        </Problem>
      ) : null}
      <div className="toolbar">
        <span className="hint" data-testid="audit-count">
          {page
            ? `${page.rows.length} entr${page.rows.length === 1 ? "y" : "ies"}${before ? " (older page)" : ""}`
            : ""}
        </span>
        {before ? (
          <Link className="btn btn-small" href={withQuery("/audit", query)}>
            ↑ Newest
          </Link>
        ) : null}
        {olderHref ? (
          <Link className="btn btn-small" href={olderHref} data-testid="audit-older">
            Older →
          </Link>
        ) : null}
        <span className="spacer" />
        <a className="btn btn-small" href={exportHref("csv")} data-testid="audit-export-csv">
          Export CSV
        </a>
        <a className="btn btn-small" href={exportHref("json")} data-testid="audit-export-json">
          Export JSON
        </a>
        {can(actor.role, "audit:verify") ? <VerifyChainButton /> : null}
      </div>
      {page ? <AuditTable rows={page.rows} /> : null}
    </main>
  );
}
