import { randomUUID } from "node:crypto";
import type { IndexRow } from "./index-row";
import { upsertLetters } from "./index-store";

/**
 * Letters written straight into the triage index (no broker), for the failure-issue tests: `at` is
 * the letter's dead-lettered time, `group` its group key and label.
 */
export function issueLetter(id: string, at: Date, group: { key: string; label?: string }, message?: string): IndexRow {
  return {
    letter_id: id,
    position: 0,
    kafka_partition: null,
    kafka_offset: null,
    message_id: id,
    dead_lettered_at: at.toISOString(),
    reason: "rejected",
    origin_queue: "orders",
    exception_class: "com.acme.Failure",
    exception_message: message ?? `failure of ${id}`,
    normalized_message: group.label ?? `failure of ${group.key}`,
    top_frame: null,
    group_key: group.key,
    group_label: group.label ?? `Failure: ${group.key}`,
    group_basis: "exception",
    disposition: "unknown",
    rule_id: null,
    receive_count: 1,
    headers: {},
    body_size: 1,
    sha256: "0".repeat(64),
    fingerprint: "f".repeat(32),
    payload: null,
    payload_key_id: null,
    payload_truncated: false,
    handled_outcome: null,
    exception_search: null,
    search_version: null,
  };
}

/** Indexes letters as one scan would write them (without marking others gone). */
export async function indexLetters(connectionId: string, queue: string, rows: IndexRow[]): Promise<void> {
  await upsertLetters(connectionId, queue, randomUUID(), rows);
}
