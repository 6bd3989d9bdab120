import type { Metadata } from "next";
import { DiscardsTable } from "@/components/discard/discards-table";
import { OperationsPage } from "@/components/jobs/operations-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { loadOrProblem } from "@/lib/use-case/app-error";
import { listDiscards } from "@/lib/discard/use-cases";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Discards" };

/** Discards across every DLQ, newest first. */
export default async function DiscardsPage() {
  const actor = await requirePageActor("/discards");
  const { value: discards, problem } = await loadOrProblem(async () => listDiscards(actor, await requestMeta(), {}));
  return (
    <OperationsPage
      title="Discards"
      note="Across every DLQ, newest 50. Discarded letters are kept in the archive."
      problem={problem}
    >
      <DiscardsTable discards={discards ?? []} showDlq />
    </OperationsPage>
  );
}
