"use client";

import { useEffect } from "react";

/** `/` focuses the element with this id, unless the user is typing somewhere. */
export function SlashFocus({ targetId }: { targetId: string }) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "/" || e.metaKey || e.ctrlKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return;
      const el = document.getElementById(targetId) as HTMLInputElement | null;
      if (el) {
        e.preventDefault();
        el.focus();
        el.select?.();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [targetId]);
  return null;
}
