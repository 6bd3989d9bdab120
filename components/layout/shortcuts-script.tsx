/**
 * The page-level keys, installed by an inline script in <head> so they work from the first paint,
 * before React has hydrated the page (on a busy machine that is a second or more after the content
 * shows). They are the only handlers of these keys, before hydration and after. What they act on
 * is marked in the server HTML:
 * - `/` focuses the element whose id a `[data-slash-focus]` marker names (components/ui/slash-focus.tsx);
 * - Esc follows the hidden `a[data-escape-back]` link (components/ui/escape-back.tsx): a plain
 *   navigation before hydration, a client-side one after (the link is a Next <Link>);
 * - Esc closes the header's menu first when it is open, and gives its button the focus back;
 * - in the list marked `[data-row-keys]` (components/ui/row-keys.tsx), j/k (or the arrows) move
 *   the selection over its `tr[data-row]` rows, a click selects a row, Enter follows the selected
 *   row's `a[data-row-open]` link (the first row when none is selected), and Esc in a field leaves it.
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
  const rowsOf = (list: Element) => Array.from(list.querySelectorAll("tr[data-row]"));
  const selectedIn = (rows: Element[]) =>
    Math.max(
      0,
      rows.findIndex((r) => r.getAttribute("aria-selected") === "true"),
    );
  const select = (rows: Element[], i: number) => {
    for (let j = 0; j < rows.length; j++) {
      if (j === i) rows[j].setAttribute("aria-selected", "true");
      else rows[j].removeAttribute("aria-selected");
    }
    rows[i]?.scrollIntoView({ block: "nearest" });
  };
  /** j/k, the arrows and Enter in the page's list; true when the key was one of them. */
  const rowKey = (e: KeyboardEvent): boolean => {
    const list = document.querySelector("[data-row-keys]");
    const rows = list ? rowsOf(list) : [];
    if (rows.length === 0) return false;
    const i = selectedIn(rows);
    if (e.key === "j" || e.key === "ArrowDown") select(rows, Math.min(i + 1, rows.length - 1));
    else if (e.key === "k" || e.key === "ArrowUp") select(rows, Math.max(i - 1, 0));
    else if (e.key === "Enter") {
      // A focused link, button or disclosure (the header's menu) takes its own Enter.
      const t = e.target as HTMLElement | null;
      if (t?.closest?.("a, button, summary")) return false;
      const open = rows[i].querySelector("a[data-row-open]") as HTMLAnchorElement | null;
      if (!open) return false;
      open.click();
    } else return false;
    return true;
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
    if (typing(e.target)) {
      if (e.key === "Escape" && document.querySelector("[data-row-keys]") && !document.querySelector("dialog[open]")) {
        e.preventDefault();
        (e.target as HTMLElement).blur();
      }
      return;
    }
    if (rowKey(e)) {
      e.preventDefault();
    } else if (e.key === "/") {
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
  // Bubbling to the window, so a control that stops its click (a row's checkbox cell) does not select.
  window.addEventListener("click", (e) => {
    const t = e.target as HTMLElement | null;
    const row = t?.closest?.("[data-row-keys] tr[data-row]");
    if (!row || t?.closest("input, label, button, select, textarea")) return;
    const list = row.closest("[data-row-keys]") as Element;
    const rows = rowsOf(list);
    select(rows, rows.indexOf(row));
  });
}

const SOURCE = `(${installShortcuts.toString()})();`;

/** Rendered in the root layout's <head>, with the request's CSP nonce (inline scripts need it). */
export function ShortcutsScript({ nonce }: { nonce: string | undefined }) {
  if (!nonce) return null;
  // biome-ignore lint/security/noDangerouslySetInnerHtml: our own constant source text, no data in it
  return <script nonce={nonce} dangerouslySetInnerHTML={{ __html: SOURCE }} />;
}
