import type { IndexRow } from "./index-row";

/**
 * One letter's index row for integration tests (what a scan writes for letter `i`): letter `l-<i>`,
 * message `m-<i>`, dead-lettered at minute `i` of 2026-01-01, a rejected letter from "orders" in
 * group "g" (class com.acme.Thing, message "thing <i> failed"), no payload, not handled. `over`
 * replaces any field.
 */
export function indexRow(i: number, over: Partial<IndexRow> = {}): IndexRow {
  return {
    letter_id: `l-${i}`,
    position: i,
    kafka_partition: null,
    kafka_offset: null,
    message_id: `m-${i}`,
    dead_lettered_at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    reason: "rejected",
    origin_queue: "orders",
    exception_class: "com.acme.Thing",
    exception_message: `thing ${i} failed`,
    exception_search: null,
    search_version: null,
    normalized_message: "thing <n> failed",
    top_frame: null,
    group_key: "g",
    group_label: "Thing: thing <n> failed",
    group_basis: "exception",
    disposition: "unknown",
    rule_id: null,
    receive_count: 1,
    headers: {},
    body_size: 3,
    sha256: "0".repeat(64),
    fingerprint: "f".repeat(32),
    payload: null,
    payload_key_id: null,
    payload_truncated: false,
    handled_outcome: null,
    ...over,
  };
}
