import { hiddenChars, hiddenCharsLabel } from "@/lib/letter/hidden-chars";

/**
 * A warning beside text that holds direction controls or invisible characters (the text itself is
 * shown as received); the tooltip names each character, and so does text only a screen reader reads
 * (aria-label on a plain span is ignored). Renders nothing for ordinary text.
 */
export function HiddenCharsBadge({ text, testId = "hidden-chars" }: { text: string; testId?: string }) {
  const h = hiddenChars(text);
  if (!h) return null;
  const { label, title } = hiddenCharsLabel(h);
  return (
    <>
      <span className="badge badge-warn" title={title} data-testid={testId}>
        {label}
      </span>
      <span className="sr-only">{title}</span>
    </>
  );
}
