import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db";
import { parseArchiveParams } from "./params";
import { countArchive, queryArchive, streamArchive } from "./queries";

/**
 * The archive's filter by operation on the real Postgres: a repair archives its originals under the
 * repair's operation id (discard_job_id), so `/archive?operation=<id>` must find exactly that
 * operation's letters, alone or with the other filters. Rows are inserted as the archive stores
 * them; their sealed parts are placeholders, since only the query is under test here.
 */
const CONN = `conn-op-${randomUUID().slice(0, 8)}`;
const REPAIR = randomUUID();
const DISCARD = randomUUID();

async function insert(jobId: string, letterId: string, queue: string, reason: string) {
  await getDb().$executeRawUnsafe(
    `INSERT INTO archived_letters (id, connection_id, queue, letter_id, discard_job_id, discard_reason, sha256, body_size, metadata,
       payload_ciphertext, payload_key_id, envelope_ciphertext, envelope_key_id, expires_at)
     VALUES (gen_random_uuid(), $1, $2, $3, $4::uuid, $5, repeat('0', 64), 1, '{}'::jsonb, '\\x00'::bytea, 'k', '\\x00'::bytea, 'k', now() + interval '1 day')`,
    CONN,
    queue,
    letterId,
    jobId,
    reason,
  );
}

beforeAll(async () => {
  await insert(REPAIR, "m-1", "orders.dlq", "Repaired and resubmitted: typo'd status");
  await insert(REPAIR, "m-2", "payments.dlq", "Repaired and resubmitted: typo'd status");
  await insert(DISCARD, "m-3", "orders.dlq", "Retired test orders");
});

afterAll(async () => {
  await getDb().$executeRawUnsafe(`DELETE FROM archived_letters WHERE connection_id = $1`, CONN);
});

const filterOf = (query: string) => {
  const p = parseArchiveParams(new URLSearchParams(query));
  if (!p.ok) throw new Error(p.message);
  return p.filter;
};

describe("archive filter by operation", () => {
  it("finds exactly the letters one operation archived, in the list, the count and the export stream", async () => {
    const filter = filterOf(`connectionId=${CONN}&operation=${REPAIR}`);
    const { rows } = await queryArchive(filter, {});
    expect(rows.map((r) => r.letterId).sort()).toEqual(["m-1", "m-2"]);
    expect(rows.every((r) => r.discardJobId === REPAIR)).toBe(true);
    expect(await countArchive(filter)).toBe(2);
    const streamed: string[] = [];
    for await (const r of streamArchive(filter, { withSealed: false })) streamed.push(r.letterId);
    expect(streamed.sort()).toEqual(["m-1", "m-2"]);
  });

  it("combines with the other filters, and an operation id in capitals names the same operation", async () => {
    expect(
      (
        await queryArchive(filterOf(`connectionId=${CONN}&queue=orders.dlq&operation=${REPAIR.toUpperCase()}`), {})
      ).rows.map((r) => r.letterId),
    ).toEqual(["m-1"]);
    expect(
      (await queryArchive(filterOf(`connectionId=${CONN}&operation=${DISCARD}`), {})).rows.map((r) => r.letterId),
    ).toEqual(["m-3"]);
    expect(await countArchive(filterOf(`connectionId=${CONN}&operation=${randomUUID()}`))).toBe(0);
  });

  it("refuses an operation id that is not a UUID at the query too, rather than letting Postgres fail", async () => {
    await expect(
      queryArchive({ connectionId: CONN, operation: "1; DROP TABLE archived_letters" }, {}),
    ).rejects.toMatchObject({ code: "bad_request:filter" });
    expect(await countArchive({ connectionId: CONN })).toBe(3);
  });
});
