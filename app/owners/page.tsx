import type { Metadata } from "next";
import { OwnerForm } from "@/components/operations/owner-form";
import { OwnersTable } from "@/components/operations/owners-table";
import { Problem } from "@/components/ui/problem";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { listOwners, type OwnerEntryView } from "@/lib/operations/use-cases";
import { asAppError } from "@/lib/errors";

export const metadata: Metadata = { title: "Owners" };
export const dynamic = "force-dynamic";

/**
 * Who owns which DLQs: shown wherever a DLQ is named and used by alerts. Everyone reads the entries
 * in match order; admins add, edit, reorder and delete the console's entries.
 */
export default async function OwnersPage() {
  const actor = await requirePageActor("/owners");
  const head = (
    <div className="page-head">
      <h1>Owners</h1>
      <span className="meta">
        The first entry whose connection and DLQ name pattern match a DLQ names its owner: the console&apos;s entries by
        position, then the config file&apos;s, in order.
      </span>
    </div>
  );
  let entries: OwnerEntryView[];
  try {
    entries = await listOwners(actor, await requestMeta());
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return (
      <main className="page">
        {head}
        <Problem title="The owner entries could not be read.">
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const canManage = can(actor.role, "ops:manage");
  const consoleRows = entries.filter((e) => e.source === "console");
  const nextPosition = consoleRows.length ? Math.min(100_000, Math.max(...consoleRows.map((e) => e.position)) + 10) : 0;
  return (
    <main className="page owners-page">
      {head}
      <p className="hint">
        Patterns: <span className="kbd">*</span> any run of characters, <span className="kbd">?</span> one character,
        case-insensitive. Entries from the config file are read-only here: change them in the config file.
        {canManage ? " Every change is recorded in the audit log." : " Only admins change owner entries."}
      </p>
      <OwnersTable entries={entries} canManage={canManage} />
      {canManage ? (
        <section className="section" aria-labelledby="add-owner-h">
          <h2 id="add-owner-h">Add an owner</h2>
          <OwnerForm
            testId="owner-add-form"
            draft={{ position: nextPosition, connectionPattern: null, queuePattern: "", team: "", contact: "" }}
          />
          <p className="hint">
            Lower positions match first; a new entry goes after the others unless you give it a lower position.
          </p>
        </section>
      ) : null}
    </main>
  );
}
