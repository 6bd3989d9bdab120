import Link from "next/link";

export default function NotFound() {
  return (
    <main className="page error-page" data-testid="not-found">
      <h1>Nothing here.</h1>
      <p>
        This address does not match a page of the console. If someone pasted it, the DLQ or letter may have a different
        name now.
      </p>
      <p>
        <Link href="/" className="btn">
          Back to the DLQs
        </Link>
      </p>
    </main>
  );
}
