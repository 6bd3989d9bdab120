import Link from "@/components/ui/link";
import type { ReactNode } from "react";

/** What happened and what to do, in an operator's words. */
export function Problem({
  title,
  children,
  back,
  testId = "problem",
}: {
  title: string;
  children?: ReactNode;
  back?: { href: string; label: string };
  testId?: string;
}) {
  return (
    <div className="banner banner-danger" role="alert" data-testid={testId}>
      <p>
        <strong>{title}</strong>
      </p>
      {children}
      {back ? (
        <p style={{ marginTop: 8, marginBottom: 0 }}>
          <Link href={back.href}>{back.label}</Link>
        </p>
      ) : null}
    </div>
  );
}
