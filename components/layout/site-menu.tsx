"use client";

import { usePathname } from "next/navigation";
import { type ReactNode, useEffect, useRef } from "react";

/**
 * The header's links and account controls inside a <details>: on a narrow screen its summary is
 * the "Menu" button, which opens and closes with a click, Enter or Space before any script has
 * run; on a laptop the stylesheet shows the content in line and hides the summary. After
 * hydration the menu also closes when a link in it is followed, on a tap outside it, and when the
 * page changes; Esc closes it from the first paint (components/layout/shortcuts-script.ts).
 */
export function SiteMenu({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLDetailsElement>(null);
  const path = usePathname();
  const shownPath = useRef(path);

  // Not on the first run: a menu opened before hydration stays open.
  useEffect(() => {
    if (shownPath.current === path) return;
    shownPath.current = path;
    if (ref.current) ref.current.open = false;
  }, [path]);

  useEffect(() => {
    const onDown = (e: PointerEvent) => {
      const menu = ref.current;
      if (menu?.open && !menu.contains(e.target as Node)) menu.open = false;
    };
    document.addEventListener("pointerdown", onDown);
    return () => document.removeEventListener("pointerdown", onDown);
  }, []);

  return (
    <details className="site-menu" data-site-menu ref={ref}>
      <summary className="btn btn-quiet site-menu-button" data-testid="site-menu-button">
        <svg aria-hidden="true" width="14" height="14" viewBox="0 0 14 14">
          <path d="M1 3h12M1 7h12M1 11h12" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" />
        </svg>
        Menu
      </summary>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: the click is the links' own; this only closes the menu after one is followed */}
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: Enter on a link fires this same click */}
      <div
        className="site-menu-panel"
        onClick={(e) => {
          if ((e.target as Element).closest("a") && ref.current) ref.current.open = false;
        }}
      >
        {children}
      </div>
    </details>
  );
}
