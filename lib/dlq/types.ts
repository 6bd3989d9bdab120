import type { DlqSummary } from "@/lib/brokers/contract/dlq";
import type { FailureInfo, Letter } from "@/lib/brokers/contract/letter";
import type { ConnectionInfo } from "@/lib/use-case/connection";

export interface ConnectionDlqs extends ConnectionInfo {
  status: "ok" | "error";
  /** Operator-facing text when the broker could not be listed. */
  error: { code: string; message: string } | null;
  dlqs: DlqSummary[];
}

export interface DlqListing {
  connections: ConnectionDlqs[];
  fetchedAt: string;
}

/** A letter as the letters table shows it: no payload, headers or properties. */
export interface LetterRow {
  id: string;
  position: number;
  messageId: string | null;
  bodySize: number;
  sha256: string;
  contentType: string | null;
  failure: FailureInfo;
  /** Set when the console already handled it but the broker keeps it (no per-letter removal). */
  handled: Letter["handled"] | null;
  /** How much the read of this page raised one of the letter's counts (Letter.readRaised). */
  readRaised?: Letter["readRaised"];
}
