"use client";

import { useEffect, useState } from "react";
import { formatRelative, formatWhen } from "@/lib/format";

/**
 * A time as the console writes it (lib/format.ts): "12 min ago" with "2025-01-31 14:05:09 UTC · 12
 * min ago" on hover, or, with `full`, the whole of it on the page. Re-renders every 15 s.
 */
export function RelativeTime({
  value,
  className,
  full = false,
  testId,
}: {
  value: string | null | undefined;
  className?: string;
  full?: boolean;
  testId?: string;
}) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(t);
  }, []);
  if (!value) return <span className="muted">—</span>;
  const whole = formatWhen(value, now);
  return (
    <time dateTime={value} title={whole} className={className} data-testid={testId} suppressHydrationWarning>
      {full ? whole : formatRelative(value, now)}
    </time>
  );
}
