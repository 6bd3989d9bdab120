import type { Metadata } from "next";
import { RedrivesTable } from "@/components/redrive/redrives-table";
import { OperationsPage } from "@/components/jobs/operations-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { loadOrProblem } from "@/lib/use-case/app-error";
import { listRedrives } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Redrives" };

/** Redrives across every DLQ, newest first. */
export default async function RedrivesPage() {
  const actor = await requirePageActor("/redrives");
  const { value: redrives, problem } = await loadOrProblem(async () => listRedrives(actor, await requestMeta(), {}));
  return (
    <OperationsPage
      title="Redrives"
      note="Across every DLQ, newest 50. Start one from a DLQ's triage view."
      problem={problem}
    >
      <RedrivesTable redrives={redrives ?? []} showDlq />
    </OperationsPage>
  );
}
