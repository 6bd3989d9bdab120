import type { ReactNode } from "react";
import { Problem } from "@/components/ui/problem";
import { getActor } from "@/lib/auth/session";

/**
 * What a forbidden.tsx renders (Next answers it with HTTP 403): the refusal in the operator's
 * words, the role that was refused, and that the attempt is on record. No data of the page.
 */
export async function ForbiddenPage({
  title,
  children,
  testId = "forbidden",
}: {
  title: string;
  children?: ReactNode;
  testId?: string;
}) {
  const actor = await getActor();
  return (
    <main className="page" data-testid={testId}>
      <Problem title={`403 · ${title}`} back={{ href: "/", label: "← Back to the DLQs" }}>
        <p>
          {actor ? `Your role (${actor.role}) does not allow this. ` : ""}
          {children} This attempt was recorded; ask an admin if you need it.
        </p>
      </Problem>
    </main>
  );
}
