"use client";

import { ErrorView } from "@/components/ui/error-view";

export default function TokensError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return <ErrorView error={error} reset={reset} what="The API token list" />;
}
