/**
 * The page-level keys, installed by an inline script in <head> so they work from the first paint,
 * before React has hydrated the page (on a busy machine that is a second or more after the content
 * shows). What they act on is marked in the server HTML:
 * - `/` focuses the element whose id a `[data-slash-focus]` marker names (components/ui/slash-focus.tsx);
 * - Esc follows the hidden `a[data-escape-back]` link (components/ui/escape-back.tsx): a plain
 *   navigation before hydration, a client-side one after (the link is a Next <Link>);
 * - Esc closes the header's menu first when it is open, and gives its button the focus back.
 * Keys typed into a field, with a modifier, or already handled by the page are left alone.
 *
 * Kept free of imports and outer names: it is sent as its own source text.
 */
function installShortcuts() {
  const typing = (t: EventTarget | null) => {
    const el = t as HTMLElement | null;
    return (
      !!el && (el.isContentEditable || el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT")
    );
  };
  window.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey) return;
    if (e.key === "Escape") {
      const menu = document.querySelector("details[data-site-menu][open]") as HTMLDetailsElement | null;
      if (menu) {
        e.preventDefault();
        menu.open = false;
        menu.querySelector("summary")?.focus();
        return;
      }
    }
    if (typing(e.target)) return;
    if (e.key === "/") {
      const marker = document.querySelector("[data-slash-focus]");
      const target = marker ? document.getElementById(marker.getAttribute("data-slash-focus") ?? "") : null;
      if (target) {
        e.preventDefault();
        target.focus();
        (target as HTMLInputElement).select?.();
      }
    } else if (e.key === "Escape") {
      // A dialog takes its own Esc.
      if (document.querySelector("dialog[open]")) return;
      const back = document.querySelector("a[data-escape-back]") as HTMLAnchorElement | null;
      if (back) {
        e.preventDefault();
        back.click();
      }
    }
  });
}

const SOURCE = `(${installShortcuts.toString()})();`;

/** Rendered in the root layout's <head>, with the request's CSP nonce (inline scripts need it). */
export function ShortcutsScript({ nonce }: { nonce: string | undefined }) {
  if (!nonce) return null;
  // biome-ignore lint/security/noDangerouslySetInnerHtml: our own constant source text, no data in it
  return <script nonce={nonce} dangerouslySetInnerHTML={{ __html: SOURCE }} />;
}
