/**
 * Broker-neutral wording for DLQ and letter pages, chosen from an adapter's capabilities and
 * vocabulary (never from its kind). Pure: shared by server components and client leaves.
 */
import type { BrokerCapabilities, BrokerVocabulary } from "@/lib/brokers/contract/capabilities";
import type { ReadRisk } from "@/lib/brokers/contract/dlq";

export type Capabilities = Pick<BrokerCapabilities, "readHidesLetters" | "readCountsAsDelivery" | "randomAccess"> &
  Partial<Pick<BrokerCapabilities, "stableOrder">>;

export interface ReadNotice {
  tone: "info" | "warn" | "danger";
  text: string;
}

const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** What reading this DLQ does to its letters, said before the operator reads it. */
export function readNotice(
  caps: Capabilities,
  vocab: BrokerVocabulary,
  opts: { queueType?: string; readRisk?: ReadRisk | null } = {},
): ReadNotice {
  const q = vocab.queue;
  // "Non-destructive" only where it is true for this DLQ.
  if (opts.readRisk) {
    return {
      tone: "danger",
      text: `Reading this ${q} from the broker is not harmless: it counts against its letters. Its pages are served from the console's snapshot of the last read you confirmed, and the broker is read again only when you confirm it.`,
    };
  }
  if (caps.randomAccess) {
    return {
      tone: "info",
      text: `Reading is non-destructive: letters are read by ${vocab.letterId} from the ${q}'s log, and nothing is committed or consumed.`,
    };
  }
  if (caps.readHidesLetters) {
    const count = caps.readCountsAsDelivery ? " and raises their receive count by one" : "";
    return {
      tone: "warn",
      text: `Browsing hides the letters read from consumers for a short visibility timeout${count}; the console gives them back as soon as the page is read.`,
    };
  }
  const order = opts.queueType === "classic" ? " in their original order" : "";
  const count = caps.readCountsAsDelivery ? ` This broker counts each read as a delivery on every letter read.` : "";
  return {
    tone: caps.readCountsAsDelivery ? "warn" : "info",
    text: `Reading is non-destructive: letters are read without acknowledgement and return to the ${q}${order}.${count}`,
  };
}

/** Said next to the pager when positions are not stable from one read to the next; null otherwise. */
export function pagingNote(caps: Capabilities, vocab: BrokerVocabulary): string | null {
  if (caps.stableOrder !== false) return null;
  return `This ${vocab.queue} has no fixed order: positions are those of this read, and a page may differ on the next one.`;
}

/**
 * What the last page a read reached says about the letters no page shows (`LetterPage.unreached`):
 * they count in the depth the pager shows, so the pages would otherwise end short in silence.
 */
export function unreachedNote(u: { reason: string }, queue: string): string {
  return `Not every letter of this ${queue} is on these pages: ${lowerFirst(u.reason)}`;
}

/** "The read stopped…" → "the read stopped…", for a reason quoted after a colon. */
const lowerFirst = (s: string) => (/^[A-Z][a-z]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s);

export interface LetterLabels {
  /** "Origin queue", "Source queue", "Original topic". */
  origin: string;
  /** "Message id", "MessageId", "Offset". */
  letterId: string;
  /** "Receive count" where each read counts as a delivery, else "Count". */
  count: string;
  /** "queue" | "topic", lower case for use inside sentences. */
  queue: string;
}

export function letterLabels(caps: Capabilities, vocab: BrokerVocabulary): LetterLabels {
  return {
    origin: sentence(vocab.origin),
    letterId: sentence(vocab.letterId),
    count: caps.readCountsAsDelivery ? "Receive count" : "Count",
    queue: vocab.queue,
  };
}
