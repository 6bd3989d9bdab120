"use client";

import { useState } from "react";

export type ThemeChoice = "system" | "light" | "dark";
const NEXT: Record<ThemeChoice, ThemeChoice> = { system: "light", light: "dark", dark: "system" };
const LABEL: Record<ThemeChoice, string> = { system: "Theme: system", light: "Theme: light", dark: "Theme: dark" };

/** Cycles system → light → dark. The choice lives in a cookie so the server renders the right theme (no flash). */
export function ThemeToggle({ initial }: { initial: ThemeChoice }) {
  const [theme, setTheme] = useState<ThemeChoice>(initial);
  return (
    <button
      type="button"
      className="btn btn-quiet"
      data-testid="theme-toggle"
      title="Switch between system, light and dark themes"
      onClick={() => {
        const next = NEXT[theme];
        setTheme(next);
        // biome-ignore lint/suspicious/noDocumentCookie: one non-secret preference the server reads to render the theme; the Cookie Store API is not in every browser operators use
        document.cookie = `theme=${next}; path=/; max-age=${60 * 60 * 24 * 365}; samesite=lax`;
        if (next === "system") delete document.documentElement.dataset.theme;
        else document.documentElement.dataset.theme = next;
      }}
    >
      {LABEL[theme]}
    </button>
  );
}
