import { CopyButton } from "@/components/ui/copy-button";
import { HiddenCharsBadge } from "@/components/ui/hidden-chars-badge";
import type { PayloadView } from "@/lib/letter/payload-view";
import { digestLabel, formatBytes } from "@/lib/format";

const KIND_LABEL = { json: "JSON (pretty-printed)", text: "text", hex: "binary (hex dump)" } as const;

/**
 * The payload: its size and SHA-256 for everyone; the view only when `view` is set, already masked
 * on the server for the reader's role (null for viewers on a sensitive DLQ).
 */
export function PayloadPanel(props: {
  view: PayloadView | null;
  masked: boolean;
  sensitive: boolean;
  canDownload: boolean;
  size: number;
  sha256: string;
  contentType: string | null;
  contentEncoding: string | null;
  downloadHref: string;
}) {
  const { view, size, sha256 } = props;
  return (
    <section className="card section" data-testid="payload">
      <div className="card-head">
        <h2>Payload</h2>
        {view ? <span className="badge">{KIND_LABEL[view.kind]}</span> : null}
        {view && view.kind !== "hex" ? <HiddenCharsBadge text={view.text} testId="payload-hidden-chars" /> : null}
        {props.masked ? (
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
        {view ? (
          <>
            <CopyButton
              text={view.text}
              label={view.kind === "hex" ? "Copy hex dump" : "Copy payload"}
              testId="copy-payload"
            />
            {props.canDownload ? (
              <a className="btn btn-small" href={props.downloadHref} download data-testid="download-payload">
                {props.masked ? "Download masked copy" : "Download original bytes"}
              </a>
            ) : null}
          </>
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
          <pre
            className={`block${view.kind === "text" ? " wrap" : ""}`}
            data-testid="payload-view"
            data-kind={view.kind}
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll container; tabIndex lets keyboard users focus and scroll a long payload
            tabIndex={0}
          >
            {view.text}
          </pre>
        </>
      ) : (
        <p className="hidden-payload" data-testid="payload-hidden">
          {props.sensitive
            ? "This DLQ is marked sensitive: payloads are hidden for your role. Size and checksum are shown so you can compare letters."
            : "Payload hidden for your role. Size and checksum are shown so you can compare letters; ask an operator to look at the content."}
        </p>
      )}
    </section>
  );
}
