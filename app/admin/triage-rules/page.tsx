import type { Metadata } from "next";
import { RulesEditor } from "@/components/triage/rules-editor";
import { Problem } from "@/components/ui/problem";
import { RelativeTime } from "@/components/ui/relative-time";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { asAppError } from "@/lib/errors";
import type { RuleSet } from "@/lib/triage/rules-store";
import { listRules } from "@/lib/triage/use-cases";

export const metadata: Metadata = { title: "Triage rules" };
export const dynamic = "force-dynamic";

export default async function TriageRulesPage() {
  const actor = await requirePageActor("/admin/triage-rules");
  let set: RuleSet;
  try {
    set = await listRules(actor, await requestMeta());
  } catch (e) {
    const err = asAppError(e);
    if (err?.type !== "forbidden") throw e;
    return (
      <main className="page" data-testid="forbidden">
        <Problem title="403 · Your role cannot see the triage rules." back={{ href: "/", label: "← Back to the DLQs" }}>
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const canEdit = can(actor.role, "triage:rules");
  return (
    <main className="page">
      <div className="page-head">
        <h1>Triage rules</h1>
        <span className="meta">
          Label groups transient-looking or permanent-looking. Advisory only: nothing is redriven or discarded by a
          rule. Every save is recorded in the audit log.
          {set.updatedAt ? (
            <>
              {" "}
              Last changed <RelativeTime value={set.updatedAt} />
              {set.updatedBy ? ` by ${set.updatedBy}` : ""}.
            </>
          ) : null}
        </span>
      </div>
      {!canEdit ? (
        <p className="banner banner-info" data-testid="rules-read-only">
          Only admins edit these rules; you see them read-only.
        </p>
      ) : null}
      <RulesEditor initial={set.rules} version={set.version} canEdit={canEdit} />
    </main>
  );
}
