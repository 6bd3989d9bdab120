import type { ReactNode } from "react";
import { CopyButton } from "@/components/ui/copy-button";
import { HiddenCharsBadge } from "@/components/ui/hidden-chars-badge";
import { VisibleText } from "@/components/ui/visible-text";
import type { MaskedByRule } from "@/lib/letter/mask-letter";
import type { PayloadView } from "@/lib/letter/payload-view";
import { digestLabel, formatBytes } from "@/lib/format";
import { HexView } from "./hex-view";
import { MaskedBadge } from "./masked-badge";

/** What the payload is, in the badge: "binary, 45 bytes", "JSON", "text". */
function kindLabel(view: PayloadView, size: number): string {
  switch (view.kind) {
    case "hex":
      return `binary, ${size.toLocaleString("en-US")} bytes`;
    case "json":
      return "JSON (pretty-printed)";
    case "text":
      return "text";
    case "hidden":
      return "hidden by masking";
  }
}

/**
 * The payload: its size and SHA-256 for everyone; the view only when `view` is set, already masked
 * on the server for the reader's role (null for viewers on a sensitive DLQ). A binary payload is a
 * hex view with a base64 copy; text and JSON mark hidden characters where they stand. `reveal` (the
 * audited admin reveal) sits inside this card, next to what it reveals.
 */
export function PayloadPanel(props: {
  view: PayloadView | null;
  masked: boolean;
  /** What was masked and by which rules; without it, `masked` alone decides the badge. */
  maskedDetail?: { payloadMaskedCount: number; byRule: MaskedByRule[]; canReveal: boolean };
  sensitive: boolean;
  canDownload: boolean;
  size: number;
  sha256: string;
  contentType: string | null;
  contentEncoding: string | null;
  downloadHref: string;
  reveal?: ReactNode;
}) {
  const { view, size, sha256, maskedDetail } = props;
  const somethingMasked = maskedDetail ? maskedDetail.payloadMaskedCount > 0 : props.masked;
  const textual = view && (view.kind === "json" || view.kind === "text");
  return (
    <section className="card section" data-testid="payload">
      <div className="card-head">
        <h2>Payload</h2>
        {view ? (
          <span className="badge" data-testid="payload-kind" data-kind={view.kind}>
            {kindLabel(view, size)}
          </span>
        ) : null}
        {textual ? <HiddenCharsBadge text={view.text} testId="payload-hidden-chars" /> : null}
        {somethingMasked && maskedDetail ? (
          <MaskedBadge
            total={maskedDetail.payloadMaskedCount}
            rules={maskedDetail.byRule.filter((r) => r.payload > 0)}
            where="in the payload"
            canReveal={maskedDetail.canReveal}
            testId="payload-masked"
          />
        ) : somethingMasked ? (
          <span
            className="badge"
            data-testid="payload-masked"
            title="Values matched by the masking rules are replaced on the server before the page is sent."
          >
            masked
          </span>
        ) : null}
        {props.sensitive ? (
          <span className="badge" data-testid="dlq-sensitive">
            sensitive DLQ
          </span>
        ) : null}
        <span className="spacer" />
        {textual ? (
          <span title="Copies the text as received, hidden characters included, so it matches what producers and consumers logged">
            <CopyButton text={view.text} label="Copy payload" testId="copy-payload" />
          </span>
        ) : null}
        {view && view.kind !== "hidden" && props.canDownload ? (
          <a className="btn btn-small" href={props.downloadHref} download data-testid="download-payload">
            {props.masked ? "Download masked copy" : "Download original bytes"}
          </a>
        ) : null}
      </div>
      <div className="payload-meta">
        <span>
          size <strong data-testid="payload-size">{formatBytes(size)}</strong> ({size.toLocaleString("en-US")} bytes)
        </span>
        <span title={digestLabel(sha256).title}>
          {digestLabel(sha256).label} <code data-testid="payload-sha256">{sha256}</code>
        </span>
        {props.contentType ? (
          <span>
            content-type <code>{props.contentType}</code>
          </span>
        ) : null}
        {props.contentEncoding ? (
          <span>
            encoding <code>{props.contentEncoding}</code>
          </span>
        ) : null}
      </div>
      {view ? (
        <>
          {view.note ? (
            <p className="banner banner-warn" data-testid="payload-note">
              {view.note}
            </p>
          ) : null}
          {view.kind === "hex" ? (
            <div data-testid="payload-view" data-kind="hex">
              <HexView base64={view.base64} maskedRanges={view.maskedRanges} size={size} />
            </div>
          ) : view.kind === "hidden" ? (
            <p className="hidden-payload" data-testid="payload-view" data-kind="hidden">
              {view.text}
            </p>
          ) : (
            <pre
              className={`block${view.kind === "text" ? " wrap" : ""}`}
              data-testid="payload-view"
              data-kind={view.kind}
              // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll container; tabIndex lets keyboard users focus and scroll a long payload
              tabIndex={0}
            >
              <VisibleText text={view.text} />
            </pre>
          )}
        </>
      ) : (
        <p className="hidden-payload" data-testid="payload-hidden">
          {props.sensitive
            ? "This DLQ is marked sensitive: payloads are hidden for your role. Size and checksum are shown so you can compare letters."
            : "Payload hidden for your role. Size and checksum are shown so you can compare letters; ask an operator to look at the content."}
        </p>
      )}
      {props.reveal}
    </section>
  );
}
