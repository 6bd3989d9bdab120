/**
 * Stable, URL-safe letter ids. A letter with a message_id is `m-<base64url(message_id)>`; without
 * one, `k-<base64url(HMAC-SHA256 of body digest + immutable properties and headers)[:22]>`, keyed
 * with a server key: the id is shown to every role, and an unkeyed digest of the body would let a
 * role that sees the payload masked check guesses of the masked values against it.
 * Ids of the earlier unkeyed form (`f-`) are still accepted, and simply no longer found. Identical
 * letters (same base id, which at-least-once dead-lettering can produce) are told apart by
 * occurrence order in the queue: the second is `<base>~2`, the third `<base>~3`. Such twins are
 * interchangeable: a request for one is answered by any of them still in the DLQ (`twinOf`).
 */
import { createHmac } from "node:crypto";
import { derivedKey } from "@/lib/crypto/derived-keys";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import { canonicalJson } from "@/lib/brokers/display";
export { OccurrenceCounter } from "@/lib/brokers/occurrence";

/** Headers and properties that the broker changes as a letter dies, is read or moves: not part of its identity. */
export function isMutableHeader(name: string): boolean {
  const n = name.toLowerCase();
  return (
    n === "x-death" ||
    n.startsWith("x-first-death-") ||
    n.startsWith("x-last-death-") ||
    n === "x-delivery-count" ||
    n === "x-received-from" ||
    n === "x-opt-deliveries"
  );
}

/** Properties RabbitMQ rewrites when dead-lettering (expiration is removed) or that describe the delivery. */
const MUTABLE_PROPERTIES = new Set([
  "expiration",
  "redelivered",
  "exchange",
  "routingKey",
  "deliveryTag",
  "consumerTag",
]);

export function fingerprint(bodySha256: string, properties: HeaderEntry[], headers: HeaderEntry[]): string {
  const h = createHmac("sha256", derivedKey("rabbitmq letter identity v1"));
  for (const p of properties) {
    if (MUTABLE_PROPERTIES.has(p.name)) continue;
    h.update(`p:${p.name}=${canonicalJson(p.value)}\n`);
  }
  for (const e of headers) {
    if (isMutableHeader(e.name)) continue;
    h.update(`h:${e.name}=${canonicalJson(e.value)}\n`);
  }
  h.update(`b:${bodySha256}`);
  return h.digest("base64url").slice(0, 22);
}

export function baseLetterId(messageId: string | null, fp: () => string): string {
  if (messageId !== null && messageId !== "") return `m-${Buffer.from(messageId, "utf8").toString("base64url")}`;
  return `k-${fp()}`;
}

/**
 * The content twins share: the id without its occurrence suffix (`k-X~2` → `k-X`). Twins are
 * interchangeable (move-rules.ts, `RequestBook`): which of them is `~2` depends only on the order
 * they are read in, and shifts as soon as one of them leaves the DLQ.
 */
export function twinOf(id: string): string {
  return id.replace(/~[1-9][0-9]*$/, "");
}

/** The letter has no id of its own (no message_id): it is identified by its content, and its twins answer for it. */
export function isContentIdentified(id: string): boolean {
  return id.startsWith("k-") || id.startsWith("f-");
}

export function isLetterId(id: string): boolean {
  return /^[mfk]-[A-Za-z0-9_-]+(~[1-9][0-9]*)?$/.test(id) && id.length <= 2048;
}
