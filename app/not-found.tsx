"use client";

import Link from "@/components/ui/link";
import { usePathname } from "next/navigation";
import { missingWords } from "@/lib/dlq/missing-page";

/** Every 404 of the console (an unknown address, or a page's notFound()): what is missing, by name. */
export default function NotFound() {
  const w = missingWords(usePathname() ?? "/");
  return (
    <main className="page error-page" data-testid="not-found">
      <h1 className="wrap-anywhere" data-testid="not-found-title">
        {w.title}
      </h1>
      <p>{w.body}</p>
      <p>
        <Link href={w.back.href} className="btn">
          {w.back.label}
        </Link>
      </p>
    </main>
  );
}
