"use client";

import { ErrorView } from "@/components/ui/error-view";

export default function OwnersError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return <ErrorView error={error} reset={reset} what="The owner list" />;
}
