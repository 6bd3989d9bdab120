"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

/**
 * The API reference is for every signed-in role, so it is added here rather than by role in the
 * header. Only where the nav has room: at 1280 px an admin's eleven links already fill the header,
 * so beyond eight links it is reached from the profile page (where tokens are made) instead.
 */
const API_REFERENCE = { href: "/api-reference", label: "API", testId: "nav-api-reference" };
const ROOM_FOR = 8;

export function NavLinks({ links }: { links: Array<{ href: string; label: string; testId: string }> }) {
  const path = usePathname();
  const shown = links.length <= ROOM_FOR && !links.some((l) => l.href === API_REFERENCE.href) ? [...links, API_REFERENCE] : links;
  return (
    <nav className="site-nav" aria-label="Main">
      {shown.map((l) => {
        const current = l.href === "/" ? path === "/" || path.startsWith("/dlqs") : path.startsWith(l.href);
        return (
          <Link key={l.href} href={l.href} data-testid={l.testId} aria-current={current ? "page" : undefined} title={l === API_REFERENCE ? "API reference" : undefined}>
            {l.label}
          </Link>
        );
      })}
    </nav>
  );
}
