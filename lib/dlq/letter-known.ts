import "server-only";
import { getDb } from "@/lib/db";

/**
 * Whether the console has ever seen a letter with this id in this DLQ: indexed by a scan, in a
 * redrive's or a discard's ledger, archived, or named by an audit row that found it (a successful
 * view that read it, a move, a skip's copy). A letter not in its DLQ now is "gone" only when this
 * is true; otherwise the id never named a letter here and the page says so (a 404).
 */
export async function letterKnown(connectionId: string, queue: string, letterId: string): Promise<boolean> {
  const rows = await getDb().$queryRawUnsafe<Array<{ known: boolean }>>(
    `SELECT (
       EXISTS (SELECT 1 FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND letter_id = $3)
       OR EXISTS (SELECT 1 FROM archived_letters WHERE connection_id = $1 AND queue = $2 AND letter_id = $3)
       OR EXISTS (SELECT 1 FROM jobs j JOIN redrive_letters l ON l.job_id = j.id AND l.letter_id = $3
                   WHERE j.connection_id = $1 AND j.queue = $2)
       OR EXISTS (SELECT 1 FROM jobs j JOIN discard_letters l ON l.job_id = j.id AND l.letter_id = $3
                   WHERE j.connection_id = $1 AND j.queue = $2)
       OR EXISTS (SELECT 1 FROM audit_log
                   WHERE queue = $2 AND connection_id = $1 AND target = $3 AND outcome = 'success'
                     AND (action <> 'letter.view' OR details->>'found' = 'true'))
     ) AS known`,
    connectionId,
    queue,
    letterId,
  );
  return rows[0]?.known === true;
}
