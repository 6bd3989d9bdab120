import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { encryptPayload, keyringFromEnv, payloadAad, resetKeyring } from "@/lib/crypto/payload-cipher";
import { getDb } from "@/lib/db";
import type { IndexRow } from "./index-row";
import { upsertLetters } from "./index-store";
import { streamLetters } from "./queries";
import { reencryptIndex } from "./reencrypt";

const k1 = randomBytes(32).toString("base64");
const k2 = randomBytes(32).toString("base64");
const saved = { keys: process.env.DLQ_INDEX_KEYS, id: process.env.DLQ_INDEX_KEY_ID };
afterAll(() => {
  process.env.DLQ_INDEX_KEYS = saved.keys;
  process.env.DLQ_INDEX_KEY_ID = saved.id;
  if (saved.keys === undefined) delete process.env.DLQ_INDEX_KEYS;
  if (saved.id === undefined) delete process.env.DLQ_INDEX_KEY_ID;
  resetKeyring();
});

function useKeys(keys: string, id: string) {
  process.env.DLQ_INDEX_KEYS = keys;
  process.env.DLQ_INDEX_KEY_ID = id;
  resetKeyring();
}

const CONN = `enc-${randomUUID().slice(0, 8)}`;

function row(queue: string, i: number): IndexRow {
  const sealed = encryptPayload(
    Buffer.from(`payload ${i}`),
    payloadAad(CONN, queue, `l-${i}`),
    keyringFromEnv({ DLQ_INDEX_KEYS: `k1:${k1}`, DLQ_INDEX_KEY_ID: "k1" }),
  );
  return {
    letter_id: `l-${i}`,
    position: i,
    kafka_partition: null,
    kafka_offset: null,
    message_id: null,
    dead_lettered_at: null,
    reason: "rejected",
    origin_queue: null,
    exception_class: null,
    exception_message: null,
    normalized_message: null,
    top_frame: null,
    group_key: "g",
    group_label: "rejected",
    group_basis: "reason",
    disposition: "unknown",
    rule_id: null,
    receive_count: 1,
    headers: {},
    body_size: 9,
    sha256: "0".repeat(64),
    fingerprint: "0".repeat(32),
    payload: sealed.data,
    payload_key_id: sealed.keyId,
    payload_truncated: false,
    handled_outcome: null,
    exception_search: null,
    search_version: null,
  };
}

async function payloads(queue: string) {
  const out: string[] = [];
  for await (const r of streamLetters({ connectionId: CONN, queue }, { withPayload: true, batchSize: 3 }))
    out.push(r.payloadText ?? "");
  return out.sort();
}

describe("index payload keys", () => {
  it("rotation: old rows decrypt with the old key kept; re-encryption moves them to the new key", async () => {
    const queue = `enc-${randomUUID().slice(0, 8)}`;
    await upsertLetters(
      CONN,
      queue,
      randomUUID(),
      Array.from({ length: 7 }, (_, i) => row(queue, i)),
      getDb(),
    );
    useKeys(`k2:${k2},k1:${k1}`, "k2");
    expect(await payloads(queue)).toEqual(Array.from({ length: 7 }, (_, i) => `payload ${i}`).sort());

    const n = await reencryptIndex({ batchSize: 3, connectionId: CONN });
    expect(n).toBe(7);
    const keys = await getDb().$queryRawUnsafe<Array<{ k: string }>>(
      `SELECT DISTINCT payload_key_id AS k FROM triage_letters WHERE queue = $1`,
      queue,
    );
    expect(keys).toEqual([{ k: "k2" }]);
    useKeys(`k2:${k2}`, "k2"); // the old key is no longer needed
    expect(await payloads(queue)).toHaveLength(7);
  });

  it("a ciphertext altered in the database fails its GCM check on export", async () => {
    const queue = `enc-${randomUUID().slice(0, 8)}`;
    useKeys(`k1:${k1}`, "k1");
    await upsertLetters(CONN, queue, randomUUID(), [row(queue, 1)], getDb());
    await getDb().$executeRawUnsafe(
      `UPDATE triage_letters SET payload_ciphertext = set_byte(payload_ciphertext, 13, get_byte(payload_ciphertext, 13) # 1) WHERE queue = $1`,
      queue,
    );
    await expect(payloads(queue)).rejects.toMatchObject({ code: "internal:payload-integrity" });
  });
});
