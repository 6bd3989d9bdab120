"use client";

import { useState } from "react";

export type ThemeChoice = "system" | "light" | "dark";
const NEXT: Record<ThemeChoice, ThemeChoice> = { system: "light", light: "dark", dark: "system" };
const LABEL: Record<ThemeChoice, string> = { system: "Theme: system", light: "Theme: light", dark: "Theme: dark" };

/** Half a disc (system), a sun (light), a moon (dark): the header shows the icon, the menu the words too. */
function ThemeIcon({ theme }: { theme: ThemeChoice }) {
  return (
    <svg aria-hidden="true" width="14" height="14" viewBox="0 0 16 16" className="theme-icon">
      {theme === "light" ? (
        <>
          <circle cx="8" cy="8" r="3" fill="currentColor" />
          <path
            d="M8 1v2M8 13v2M1 8h2M13 8h2M3 3l1.4 1.4M11.6 11.6L13 13M3 13l1.4-1.4M11.6 4.4L13 3"
            stroke="currentColor"
            strokeWidth="1.4"
            strokeLinecap="round"
          />
        </>
      ) : theme === "dark" ? (
        <path d="M10.5 1.5a6.5 6.5 0 1 0 4 9.8A5.5 5.5 0 0 1 10.5 1.5z" fill="currentColor" />
      ) : (
        <>
          <circle cx="8" cy="8" r="6" fill="none" stroke="currentColor" strokeWidth="1.4" />
          <path d="M8 2a6 6 0 0 1 0 12z" fill="currentColor" />
        </>
      )}
    </svg>
  );
}

/** Cycles system → light → dark. The choice lives in a cookie so the server renders the right theme (no flash). */
export function ThemeToggle({ initial }: { initial: ThemeChoice }) {
  const [theme, setTheme] = useState<ThemeChoice>(initial);
  return (
    <button
      type="button"
      className="btn btn-quiet theme-toggle"
      data-testid="theme-toggle"
      data-theme-choice={theme}
      title={`${LABEL[theme]}. Switch between system, light and dark themes`}
      onClick={() => {
        const next = NEXT[theme];
        setTheme(next);
        // biome-ignore lint/suspicious/noDocumentCookie: one non-secret preference the server reads to render the theme; the Cookie Store API is not in every browser operators use
        document.cookie = `theme=${next}; path=/; max-age=${60 * 60 * 24 * 365}; samesite=lax`;
        if (next === "system") delete document.documentElement.dataset.theme;
        else document.documentElement.dataset.theme = next;
      }}
    >
      <ThemeIcon theme={theme} />
      <span className="theme-label">{LABEL[theme]}</span>
    </button>
  );
}
