/**
 * npm run audit:verify
 * Checks the audit log's MAC chain and holds it to every checkpoint of this database on file
 * (DLQ_AUDIT_CHECKPOINTS, default <data dir>/audit-checkpoints.jsonl); when all holds, checkpoints
 * the head. Needs the console's audit key (DLQ_AUDIT_KEY(S) or the generated <data dir>/audit-key).
 * Exit code 0: intact; 1: broken (the first bad row, or the cut or emptied end, is named); 2: could not check.
 */
import "dotenv/config";
import { closeDb, databaseMode } from "@/lib/db";
import { verifyAuditChain } from "@/lib/audit";
import { isAppError } from "@/lib/errors";

async function main() {
  const result = await verifyAuditChain();
  const cp = result.checkpoints;
  if (result.ok) {
    console.log(`Audit chain intact: ${result.checked} row(s) checked.`);
    console.log(
      `Checkpoints: ${cp.checked} held against the log (${cp.file})${cp.written ? "; the head was checkpointed" : ""}.`,
    );
    if (cp.writeError) console.error(`Warning: ${cp.writeError}.`);
    if (result.legacyRows > 0)
      console.log(
        `${result.legacyRows} row(s) predate the keyed chain (unkeyed hash); the keyed rows after them protect them.`,
      );
  } else {
    const where = result.brokenAt?.id ? ` at row ${result.brokenAt.id}` : "";
    console.error(
      `Audit chain BROKEN${where}: ${result.brokenAt?.reason} (${result.checked} row(s) verified before that).`,
    );
    process.exitCode = 1;
  }
}

main()
  .catch((e) => {
    const busy = isAppError(e) && e.code === "unavailable:database" && databaseMode() === "pglite";
    console.error(
      `audit:verify could not check the chain: ${isAppError(e) ? e.userMessage : e instanceof Error ? e.message : String(e)}`,
    );
    // The running console owns the embedded database; it can verify the chain itself.
    if (busy) console.error("While the console runs, an admin can verify the chain on its Audit page (Verify chain).");
    process.exitCode = 2;
  })
  .finally(() => closeDb());
