"use client";

import { useMemo } from "react";
import { CopyButton } from "@/components/ui/copy-button";
import { hexLine, hexRows, MASKED_ASCII } from "@/lib/letter/hex";
import { formatBytes } from "@/lib/format";
import { base64ToBytes } from "@/lib/text";

const MASKED_RUN = new RegExp(`(${MASKED_ASCII}+)`);

/** A row's text with its masked cells set apart, so they read as "not shown", not as bytes. */
function RowText({ line }: { line: string }) {
  const parts = line.split(MASKED_RUN);
  return (
    <>
      {parts.map((p, i) =>
        i % 2 === 1 ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed line
          <span key={i} className="masked-bytes" title="masked for your role">
            {p}
          </span>
        ) : (
          p
        ),
      )}
    </>
  );
}

/**
 * A binary payload as `hexdump -C` prints it: offset, 16 bytes in hex, their ASCII. Drawn in the
 * browser from the bytes the server let this role see (at most the view's cap; `size` is the whole
 * payload's). Base64 of exactly those bytes is offered to copy only when nothing in them is masked:
 * masked bytes are zeroed on the server, and a copy of zeros would not be the letter.
 */
export function HexView({
  base64,
  maskedRanges,
  size,
  testId = "hex-view",
}: {
  base64: string;
  maskedRanges: Array<[number, number]>;
  size: number;
  testId?: string;
}) {
  const bytes = useMemo(() => base64ToBytes(base64) ?? new Uint8Array(), [base64]);
  const rows = useMemo(() => hexRows(bytes, { masked: maskedRanges }), [bytes, maskedRanges]);
  const cut = bytes.length < size;
  const maskedBytes = maskedRanges.reduce((n, [s, e]) => n + (e - s), 0);
  const dump = useMemo(() => rows.map(hexLine).join("\n"), [rows]);
  return (
    <div className="hex" data-testid={testId}>
      <div className="toolbar hex-toolbar">
        <span className="muted" data-testid={`${testId}-extent`}>
          {cut
            ? `Showing the first ${bytes.length.toLocaleString("en-US")} of ${size.toLocaleString("en-US")} bytes (${formatBytes(bytes.length)} of ${formatBytes(size)}); download for all of it.`
            : `${bytes.length.toLocaleString("en-US")} bytes`}
        </span>
        <span className="spacer" />
        {maskedRanges.length === 0 ? (
          <span title="Copies the base64 of the bytes shown, exactly as the broker holds them">
            <CopyButton
              text={base64}
              label={cut ? `Copy base64 (first ${formatBytes(bytes.length)})` : "Copy base64"}
              testId={`${testId}-copy-base64`}
            />
          </span>
        ) : (
          <span className="muted" data-testid={`${testId}-masked`}>
            {maskedBytes.toLocaleString("en-US")} bytes masked (▒): no base64 copy
          </span>
        )}
        <CopyButton text={dump} label="Copy hex dump" testId={`${testId}-copy-dump`} />
      </div>
      <pre
        className="block hex-rows"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll container; tabIndex lets keyboard users focus and scroll a long dump
        tabIndex={0}
      >
        {rows.map((r) => (
          <span key={r.offset} className="hex-row" data-testid="hex-row" data-offset={r.offset}>
            {r.masked ? <RowText line={hexLine(r)} /> : hexLine(r)}
            {"\n"}
          </span>
        ))}
      </pre>
    </div>
  );
}
