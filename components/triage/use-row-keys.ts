"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";

function isTyping(t: EventTarget | null) {
  const el = t as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

/**
 * The tables' keyboard: j/k (or arrows) move the selection, Enter opens `hrefOf(selected)`,
 * `/` focuses `searchId`, Esc leaves an input or goes to `backHref`. Only the table with
 * `enabled` listens, so two tables on one page do not both move.
 */
export function useRowKeys({
  count,
  hrefOf,
  backHref,
  searchId,
  enabled = true,
}: {
  count: number;
  hrefOf: (i: number) => string | null;
  backHref: string;
  searchId?: string;
  enabled?: boolean;
}) {
  const router = useRouter();
  const [selected, setSelected] = useState(0);
  const rowsRef = useRef<Array<HTMLTableRowElement | null>>([]);

  useEffect(() => {
    if (!enabled) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      if (isTyping(e.target)) {
        if (e.key === "Escape") {
          (e.target as HTMLElement).blur();
          e.preventDefault();
        }
        return;
      }
      if (e.key === "j" || e.key === "ArrowDown") {
        e.preventDefault();
        setSelected((s) => Math.min(s + 1, count - 1));
      } else if (e.key === "k" || e.key === "ArrowUp") {
        e.preventDefault();
        setSelected((s) => Math.max(s - 1, 0));
      } else if (e.key === "Enter") {
        if (e.target instanceof HTMLAnchorElement || e.target instanceof HTMLButtonElement) return;
        const href = hrefOf(selected);
        if (href) {
          e.preventDefault();
          router.push(href);
        }
      } else if (e.key === "/" && searchId) {
        const el = document.getElementById(searchId) as HTMLInputElement | null;
        if (el) {
          e.preventDefault();
          el.focus();
          el.select?.();
        }
      } else if (e.key === "Escape") {
        router.push(backHref);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [enabled, count, hrefOf, selected, backHref, searchId, router]);

  useEffect(() => {
    if (enabled) rowsRef.current[selected]?.scrollIntoView({ block: "nearest" });
  }, [selected, enabled]);

  const rowProps = (i: number) => ({
    ref: (el: HTMLTableRowElement | null) => {
      rowsRef.current[i] = el;
    },
    "aria-selected": enabled && i === selected,
    onClick: () => setSelected(i),
  });
  return { selected, setSelected, rowProps };
}
