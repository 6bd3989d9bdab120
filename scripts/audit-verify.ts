/**
 * npm run audit:verify
 * Recomputes the audit log's hash chain. Exit code 0: intact; 1: broken (the first bad row is
 * named); 2: could not check.
 */
import "dotenv/config";
import { closeDb, databaseMode } from "@/lib/db";
import { verifyAuditChain } from "@/lib/audit";
import { isAppError } from "@/lib/errors";

async function main() {
  const result = await verifyAuditChain();
  if (result.ok) {
    console.log(`Audit chain intact: ${result.checked} row(s) checked.`);
  } else {
    console.error(`Audit chain BROKEN at row ${result.brokenAt?.id}: ${result.brokenAt?.reason} (${result.checked} row(s) before it are intact).`);
    process.exitCode = 1;
  }
}

main()
  .catch((e) => {
    const busy = isAppError(e) && e.code === "unavailable:database" && databaseMode() === "pglite";
    console.error(`audit:verify could not check the chain: ${isAppError(e) ? e.userMessage : e instanceof Error ? e.message : String(e)}`);
    // The running console owns the embedded database; it can verify the chain itself.
    if (busy) console.error("While the console runs, an admin can verify the chain on its Audit page (Verify chain).");
    process.exitCode = 2;
  })
  .finally(() => closeDb());
