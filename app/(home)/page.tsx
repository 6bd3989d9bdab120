import type { Metadata } from "next";
import { DlqList } from "@/components/dlq/dlq-list";
import { SlashFocus } from "@/components/ui/slash-focus";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { listDlqs } from "@/lib/dlq/list-dlqs";
import { loggableError } from "@/lib/errors";
import { parseSort } from "@/lib/operations/ui-overview";
import { viewOverview, type Overview } from "@/lib/operations/use-cases";

export const metadata: Metadata = { title: "DLQs" };
export const dynamic = "force-dynamic";

type Search = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export default async function DlqListPage({ searchParams }: { searchParams: Promise<Search> }) {
  const actor = await requirePageActor("/");
  const meta = await requestMeta();
  const sp = await searchParams;
  const [listing, overview] = await Promise.all([
    listDlqs(actor, meta),
    // The live list stands on its own: without the sampler's figures it shows what it always did.
    viewOverview(actor, meta).catch((e): Overview | null => {
      console.error("overview: the sampler's figures could not be read", loggableError(e));
      return null;
    }),
  ]);
  const view = {
    ...parseSort(one(sp.sort), one(sp.dir)),
    q: (one(sp.q) ?? "").slice(0, 200),
    gone: one(sp.gone) === "1",
    all: one(sp.all) === "1",
  };
  return (
    <main className="page">
      <div className="page-head">
        <h1>Dead-letter queues</h1>
        <span className="meta">
          Depths refresh on their own. Opening a DLQ reads its letters without removing them.
        </span>
      </div>
      <SlashFocus targetId="dlq-filter" />
      <DlqList initial={listing} initialOverview={overview} view={view} renderedAt={Date.now()} />
    </main>
  );
}
