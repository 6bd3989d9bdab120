"use client";

import { useEffect, useState } from "react";
import { formatRelative, formatUtc } from "@/lib/format";

/** "12 min ago" with the absolute UTC time in the title; re-renders every 15 s. */
export function RelativeTime({ value, className }: { value: string | null | undefined; className?: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(t);
  }, []);
  if (!value) return <span className="muted">—</span>;
  return (
    <time dateTime={value} title={formatUtc(value)} className={className} suppressHydrationWarning>
      {formatRelative(value, now)}
    </time>
  );
}
