/**
 * `/` focuses the element with this id, unless the user is typing somewhere. A marker only: the
 * key is handled by the root layout's inline script (components/layout/shortcuts-script.tsx), so
 * it works from the first paint, before hydration.
 */
export function SlashFocus({ targetId }: { targetId: string }) {
  return <span hidden data-slash-focus={targetId} />;
}
