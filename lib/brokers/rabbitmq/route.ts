/** Where a moved letter goes on RabbitMQ: an exchange and routing key, and how the operator reads it. */
import type { ConsumeMessage } from "amqplib";
import { findHeader, displayText } from "@/lib/brokers/display";
import { decodeHeaders } from "@/lib/brokers/rabbitmq/letter";
import { parseXDeath } from "@/lib/brokers/rabbitmq/failure";

export interface Route {
  exchange: string;
  routingKey: string;
  /** In the operator's words. */
  words: string;
}

export function describeRoute(exchange: string, routingKey: string): string {
  return exchange === ""
    ? `default exchange, routing key "${routingKey}" (queue "${routingKey}")`
    : `exchange "${exchange}", routing key "${routingKey}"`;
}

/**
 * Where "origin" sends a letter: straight to the queue it last died in (x-death[0].queue, most
 * recent first), through the default exchange. Not through x-death[0]'s exchange and routing key:
 * on a fanout or topic exchange that would copy the letter to every other queue bound there too,
 * whose consumers already handled it. Then x-first-death-queue; then Spring AMQP's
 * x-original-exchange / x-original-routingKey (a republished failure has no x-death); then the
 * DLQ's configured origin queue.
 */
export function originRoute(msg: ConsumeMessage, configOrigin: string | null): Route | { error: string } {
  const headers = decodeHeaders(msg);
  const [last] = parseXDeath(headers);
  if (last?.queue) return { exchange: "", routingKey: last.queue, words: describeRoute("", last.queue) };
  const firstQueue = displayText(findHeader(headers, "x-first-death-queue"));
  if (firstQueue) return { exchange: "", routingKey: firstQueue, words: describeRoute("", firstQueue) };
  const springExchange = displayText(findHeader(headers, "x-original-exchange"));
  const springKey = displayText(findHeader(headers, "x-original-routingKey"));
  if (springExchange !== null && springKey)
    return { exchange: springExchange, routingKey: springKey, words: describeRoute(springExchange, springKey) };
  if (configOrigin) return { exchange: "", routingKey: configOrigin, words: describeRoute("", configOrigin) };
  return {
    error:
      "Its origin cannot be derived: it has no x-death entry, no x-first-death-queue or Spring x-original-* headers, and the DLQ has no origin in the config. Choose a target queue explicitly.",
  };
}

// ---------------------------------------------------------------------------------------------
// One walk from the head of the DLQ, shared by move, remove and move to safety (safe-move.ts): find
// each requested letter and check its checksum (or take every letter present at the start), hand it

/** The queue a route delivers to by name (the default exchange), or null for an exchange route. */
export function routeQueue(route: Route): string | null {
  return route.exchange === "" ? route.routingKey : null;
}
