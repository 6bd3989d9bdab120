import type { ReactNode } from "react";
import { Problem } from "@/components/ui/problem";

/**
 * The page of one kind of operation across every DLQ (redrives, discards): a heading with a note,
 * then the list; or the reason it could not be listed.
 */
export function OperationsPage({
  title,
  note,
  problem,
  children,
}: {
  title: string;
  note: ReactNode;
  problem: string | null;
  children: ReactNode;
}) {
  if (problem !== null) {
    return (
      <main className="page">
        <Problem
          title={`The ${title.toLowerCase()} could not be listed.`}
          back={{ href: "/", label: "← Back to the DLQs" }}
        >
          <p>{problem}</p>
        </Problem>
      </main>
    );
  }
  return (
    <main className="page">
      <div className="page-head">
        <h1>{title}</h1>
        <span className="meta">{note}</span>
      </div>
      {children}
    </main>
  );
}
