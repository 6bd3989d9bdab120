"use client";

import Link from "@/components/ui/link";
import { usePathname } from "next/navigation";

export function NavLinks({ links }: { links: Array<{ href: string; label: string; testId: string }> }) {
  const path = usePathname();
  return (
    <nav className="site-nav" aria-label="Main">
      {links.map((l) => {
        const current = l.href === "/" ? path === "/" || path.startsWith("/dlqs") : path.startsWith(l.href);
        return (
          <Link key={l.href} href={l.href} data-testid={l.testId} aria-current={current ? "page" : undefined}>
            {l.label}
          </Link>
        );
      })}
    </nav>
  );
}
