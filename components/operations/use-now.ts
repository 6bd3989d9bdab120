"use client";

import { useEffect, useState } from "react";

/**
 * The current time, ticking every `everyMs`. It starts at `renderedAt` (the server's render time)
 * so hydration sees the same words the server wrote ("lost in 2 h"), then moves to the clock.
 */
export function useNow(renderedAt: number, everyMs: number): number {
  const [now, setNow] = useState(renderedAt);
  useEffect(() => {
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
