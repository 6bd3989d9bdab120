import type { Metadata } from "next";
import { DiscardsTable } from "@/components/discard/discards-table";
import { Problem } from "@/components/ui/problem";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { loadOrProblem } from "@/lib/dlq/app-error";
import { listDiscards } from "@/lib/discard/use-cases";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Discards" };

/** Discards across every DLQ, newest first. */
export default async function DiscardsPage() {
  const actor = await requirePageActor("/discards");
  const { value: discards, problem } = await loadOrProblem(async () => listDiscards(actor, await requestMeta(), {}));
  if (problem !== null) {
    return (
      <main className="page">
        <Problem title="The discards could not be listed." back={{ href: "/", label: "← Back to the DLQs" }}>
          <p>{problem}</p>
        </Problem>
      </main>
    );
  }
  return (
    <main className="page">
      <div className="page-head">
        <h1>Discards</h1>
        <span className="meta">Across every DLQ, newest 50. Discarded letters are kept in the archive.</span>
      </div>
      <DiscardsTable discards={discards} showDlq />
    </main>
  );
}
