import { EscapeBack } from "./escape-back";
import { SlashFocus } from "./slash-focus";

/**
 * The list keyboard's markers. The keys are handled by the root layout's inline script
 * (components/layout/shortcuts-script.tsx), so they work from the first paint, before hydration:
 * j/k (or the arrows) move the selection over the rows of the table marked `ROW_KEYS`, a click
 * selects a row, Enter follows the selected row's `ROW_OPEN` link, `/` focuses `searchId`, Esc
 * leaves a field or follows `backHref`. The selection is the rows' `aria-selected`, which only the
 * script sets (React renders none); with none set the first row is the selected one.
 * One list a page: only the table that has the keyboard carries the markers.
 */
export function RowKeys({ searchId, backHref }: { searchId: string; backHref: string }) {
  return (
    <>
      <SlashFocus targetId={searchId} />
      <EscapeBack href={backHref} />
    </>
  );
}

/** On the table whose rows the keys move over. */
export const ROW_KEYS = { "data-row-keys": "" } as const;
/** On each row the selection can stand on. */
export const ROW = { "data-row": "" } as const;
/** On the link Enter follows in a row. */
export const ROW_OPEN = { "data-row-open": "" } as const;
