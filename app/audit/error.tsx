"use client";

import { ErrorView } from "@/components/ui/error-view";

export default function AuditError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return <ErrorView error={error} reset={reset} what="The audit log" />;
}
