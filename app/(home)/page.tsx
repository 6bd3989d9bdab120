import type { Metadata } from "next";
import { DlqList } from "@/components/dlq/dlq-list";
import { SlashFocus } from "@/components/ui/slash-focus";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { listDlqs } from "@/lib/dlq/list-dlqs";

export const metadata: Metadata = { title: "DLQs" };
export const dynamic = "force-dynamic";

export default async function DlqListPage() {
  const actor = await requirePageActor("/");
  const listing = await listDlqs(actor, await requestMeta());
  return (
    <main className="page">
      <div className="page-head">
        <h1>Dead-letter queues</h1>
        <span className="meta">Depths refresh on their own. Opening a DLQ reads its letters without removing them.</span>
      </div>
      <SlashFocus targetId="dlq-filter" />
      <DlqList initial={listing} />
    </main>
  );
}
