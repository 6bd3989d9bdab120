"use client";

import { ErrorView } from "@/components/ui/error-view";

export default function ProfileError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return <ErrorView error={error} reset={reset} what="Your profile" />;
}
