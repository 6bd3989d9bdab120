/**
 * The copy of a Pulsar dead letter: the topic it goes to, the properties it carries (the console's
 * markers replaced, never appended) and the complete copy the archive keeps (`LetterCopy`).
 */
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import type { Letter, LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveRequest } from "@/lib/brokers/contract/move";
import { encodeEnvelope } from "@/lib/brokers/envelope";
import { parseTopicName, type TopicName } from "@/lib/brokers/pulsar/client";
import { bareTopic, REAL_TOPIC, type PulsarMessageFrame } from "@/lib/brokers/pulsar/letter";

/** What an archived Pulsar letter keeps besides its body (`LetterCopy.envelope`). */
export interface PulsarEnvelope {
  topic: string;
  messageId: string;
  properties: Array<[string, string]>;
  key: string | null;
  eventTime: string | null;
  publishTime: string | null;
}

/** The topic a letter's copy goes to, or why there is none (the operator's words). */
export function resolveTarget(
  dlq: TopicName,
  target: MoveRequest["target"],
  properties: Record<string, string>,
  configOrigin: string | null,
): TopicName | string {
  if (target.kind === "queue") {
    const named = target.name.includes("/")
      ? parseTopicName(target.name)
      : { tenant: dlq.tenant, namespace: dlq.namespace, topic: target.name };
    return named ?? `"${target.name}" is not a topic name (tenant/namespace/topic, or a topic of the DLQ's namespace).`;
  }
  const real = properties[REAL_TOPIC];
  const origin = real ? bareTopic(real) : configOrigin;
  if (!origin)
    return "The letter has no REAL_TOPIC property and the DLQ has no configured origin: choose a target topic.";
  return (
    parseTopicName(origin) ?? `The letter's origin "${origin}" is not a persistent topic the console can publish to.`
  );
}

const MARKERS = new Set<string>([
  REDRIVE_HEADERS.redriveId,
  REDRIVE_HEADERS.replayId,
  REDRIVE_HEADERS.redriveCount,
  REDRIVE_HEADERS.originalMessageId,
]);

/** The letter's properties in their order, the console's markers replaced (never appended). */
export function withMarkers(
  properties: Record<string, string>,
  req: Pick<MoveRequest, "markers">,
  messageId: string | null,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(properties)) if (!MARKERS.has(k)) out[k] = v;
  out[REDRIVE_HEADERS.redriveId] = req.markers.redriveId;
  out[REDRIVE_HEADERS.replayId] = req.markers.replayId;
  out[REDRIVE_HEADERS.redriveCount] = String(req.markers.redriveCount);
  const original = properties[REDRIVE_HEADERS.originalMessageId] ?? req.markers.originalMessageId ?? messageId;
  if (original) out[REDRIVE_HEADERS.originalMessageId] = original;
  return out;
}

/** The complete copy of a DLQ letter handed to `beforeRemove` (discard, and the original of a move). */
export function copyOf(dlq: string, letterId: string, letter: Letter, frame: PulsarMessageFrame): LetterCopy {
  const envelope: PulsarEnvelope = {
    topic: dlq,
    messageId: letter.messageId ?? "",
    properties: Object.entries(frame.properties ?? {}),
    key: frame.key ?? null,
    eventTime: frame.eventTime ?? null,
    publishTime: frame.publishTime ?? null,
  };
  return { letterId, letter, envelope: encodeEnvelope("pulsar", letter.body, envelope) };
}
