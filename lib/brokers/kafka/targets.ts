/**
 * Where a Kafka redrive sends a letter: the explicit target topic, or the letter's origin (Spring's
 * `kafka_dlt-original-topic`, Connect's `__connect.errors.topic`, else the DLT's configured origin).
 * Explicit targets are checked once before anything moves (typed errors); an origin per letter (a
 * reason: that letter fails and stays). Whether a topic exists is asked once per call.
 */
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { MoveRequest } from "@/lib/brokers/contract/move";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import { decodeKafkajsHeaders, originOf } from "@/lib/brokers/kafka/headers";
import type { MoverDeps } from "@/lib/brokers/kafka/mover-deps";

export function kafkaTargets(deps: MoverDeps, dlq: string) {
  const exists = new Map<string, Promise<boolean>>();
  const topicExists = (t: string) => {
    let p = exists.get(t);
    if (!p) {
      p = deps.topicExists(t);
      exists.set(t, p);
      p.catch(() => exists.delete(t));
    }
    return p;
  };
  let configured: { origin: string | null } | null = null;

  return {
    /** Throws a typed error for an explicit target that is the DLT itself or does not exist. */
    async checkExplicit(requests: MoveRequest[]): Promise<void> {
      for (const name of new Set(requests.flatMap((r) => (r.target.kind === "queue" ? [r.target.name] : [])))) {
        if (name === dlq)
          throw new BrokerError("bad_request", {
            userMessage: `The target "${name}" is the dead-letter topic itself: choose the original topic or another one.`,
          });
        let ok: boolean;
        try {
          ok = await topicExists(name);
        } catch (e) {
          throw deps.mapError(e, name);
        }
        if (!ok)
          throw new BrokerError("not_found", {
            userMessage: `Target topic "${name}" does not exist on ${deps.endpoint}. Nothing was moved. Create it, or choose another target.`,
          });
      }
    },

    /** The topic this letter goes to, or why it cannot go anywhere (it stays in the DLT). */
    async resolve(req: MoveRequest, record: InternalRecord): Promise<{ topic: string } | { reason: string }> {
      if (req.target.kind === "queue") return { topic: req.target.name };
      let topic = originOf(decodeKafkajsHeaders(record.headers)).topic;
      if (!topic) {
        configured ??= { origin: deps.configOrigin(dlq) };
        topic = configured.origin;
      }
      if (!topic)
        return {
          reason: `Letter has no original topic: no kafka_dlt-original-topic or __connect.errors.topic header, and no origin is configured for "${dlq}". Choose a target topic.`,
        };
      if (topic === dlq)
        return {
          reason: `The letter's original topic is the dead-letter topic itself ("${dlq}"): choose a target topic.`,
        };
      let ok: boolean;
      try {
        ok = await topicExists(topic);
      } catch (e) {
        return { reason: `Could not check the original topic "${topic}": ${deps.mapError(e, topic).userMessage}` };
      }
      return ok
        ? { topic }
        : {
            reason: `The original topic "${topic}" does not exist on ${deps.endpoint}. Choose a target topic. The letter is still in the DLT.`,
          };
    },
  };
}
