import type { DeathRecord, FailureInfo, HeaderEntry } from "@/lib/brokers/contract/letter";
import { hiddenCharsIn, hiddenCharsSentence } from "@/lib/letter/hidden-chars";
import type { PayloadView } from "@/lib/letter/payload-view";
import { valueText } from "@/lib/text";

/** Every text of a letter a reader sees on its page. */
export function* letterTexts(l: {
  id: string;
  messageId: string | null;
  correlationId: string | null;
  orderingKey?: string | null;
  failure: FailureInfo;
  headers: HeaderEntry[];
  properties: HeaderEntry[];
  history: DeathRecord[];
  payload: PayloadView | null;
}): Generator<string> {
  yield l.id;
  for (const t of [l.messageId, l.correlationId, l.orderingKey ?? null]) if (t) yield t;
  const f = l.failure;
  for (const t of [f.reason, f.originQueue, f.exchange, f.exceptionClass, f.exceptionMessage, f.stackTrace])
    if (t) yield t;
  yield* f.routingKeys;
  for (const e of [...l.headers, ...l.properties, ...l.history.flatMap((h) => h.extra)]) {
    yield e.name;
    yield valueText(e.value);
  }
  for (const h of l.history) for (const t of [h.queue, h.reason, h.exchange, ...h.routingKeys]) if (t) yield t;
  if (l.payload && (l.payload.kind === "json" || l.payload.kind === "text")) yield l.payload.text;
}

/**
 * A letter-wide warning when anything on the page holds direction controls or invisible
 * characters: how many, and that they are marked where they stand. Nothing for ordinary letters.
 */
export function HiddenCharsBanner({ texts, queue }: { texts: Iterable<string>; queue: string }) {
  const h = hiddenCharsIn([queue, ...texts]);
  if (!h) return null;
  return (
    <div className="banner banner-warn" role="status" data-testid="hidden-chars-banner">
      <strong>{hiddenCharsSentence(h)}</strong> What looks like one text may read otherwise: {h.summary.join(", ")}.
      Copy buttons copy the text as received.
    </div>
  );
}
