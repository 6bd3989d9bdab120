import type { Metadata } from "next";
import { RedrivesTable } from "@/components/redrive/redrives-table";
import { Problem } from "@/components/ui/problem";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { loadOrProblem } from "@/lib/dlq/app-error";
import { listRedrives } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Redrives" };

/** Redrives across every DLQ, newest first. */
export default async function RedrivesPage() {
  const actor = await requirePageActor("/redrives");
  const { value: redrives, problem } = await loadOrProblem(async () => listRedrives(actor, await requestMeta(), {}));
  if (problem !== null) {
    return (
      <main className="page">
        <Problem title="The redrives could not be listed." back={{ href: "/", label: "← Back to the DLQs" }}>
          <p>{problem}</p>
        </Problem>
      </main>
    );
  }
  return (
    <main className="page">
      <div className="page-head">
        <h1>Redrives</h1>
        <span className="meta">Across every DLQ, newest 50. Start one from a DLQ&apos;s triage view.</span>
      </div>
      <RedrivesTable redrives={redrives} showDlq />
    </main>
  );
}
