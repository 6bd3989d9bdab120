import { hiddenCharSegments } from "@/lib/letter/hidden-chars";

/**
 * Text as received, with each direction control and invisible character marked where it stands:
 * `invoice-⟨U+202E⟩gpj.exe`. The marker is drawn by CSS from `data-cp` around the real character,
 * so the DOM text (what a selection or a screen reader's text gets, what tests compare) stays what
 * the broker holds, while the isolate around it stops a direction control from reordering what
 * follows. The whole text sits in a <bdi> for the same reason.
 */
export function VisibleText({ text, maxMarkers }: { text: string; maxMarkers?: number }) {
  const { segments } = hiddenCharSegments(text, maxMarkers);
  if (segments.length === 1 && typeof segments[0] === "string") return <bdi>{text}</bdi>;
  return (
    <bdi>
      {segments.map((s, i) =>
        typeof s === "string" ? (
          s
        ) : (
          <span
            // biome-ignore lint/suspicious/noArrayIndexKey: segments are fixed for the text; position is their identity
            key={i}
            className={`hidden-char${s.bidi ? " hidden-char-bidi" : ""}`}
            data-cp={s.label}
            data-testid="hidden-char"
            title={`${s.label} ${s.name}`}
          >
            {s.char}
          </span>
        ),
      )}
    </bdi>
  );
}
