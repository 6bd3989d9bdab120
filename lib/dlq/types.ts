import type { BrokerCapabilities, BrokerKind, BrokerVocabulary, DlqSummary, FailureInfo, Letter } from "@/lib/brokers/types";

/** What the UI knows about a connection; never its URL or credentials. */
export interface ConnectionInfo {
  connectionId: string;
  displayName: string;
  kind: BrokerKind;
  capabilities: BrokerCapabilities;
  vocabulary: BrokerVocabulary;
}

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
}
