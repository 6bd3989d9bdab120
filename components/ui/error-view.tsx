"use client";

import Link from "@/components/ui/link";

/**
 * What an error boundary shows: an operator-language explanation, never the exception text.
 * (In production Next replaces server error messages anyway; `digest` ties it to the server log.)
 */
export function ErrorView({
  error,
  reset,
  what,
}: {
  error: Error & { digest?: string };
  reset: () => void;
  what: string;
}) {
  return (
    <main className="page error-page" data-testid="error-boundary">
      <h1>{what} could not be shown.</h1>
      <p>
        Something failed on the server while preparing this page. Nothing was changed on any broker. Try again; if it
        keeps failing, check that the database and brokers are up (<a href="/api/ready">readiness</a>) and give the
        console&apos;s owners this reference: <code>{error.digest ?? "no reference"}</code>.
      </p>
      <p style={{ display: "flex", gap: 8 }}>
        <button type="button" className="btn btn-primary" onClick={() => reset()}>
          Try again
        </button>
        <Link href="/" className="btn">
          Back to the DLQs
        </Link>
      </p>
    </main>
  );
}
