import Link from "@/components/ui/link";

/**
 * Esc (outside inputs) goes to `href`. A hidden link the root layout's inline script follows
 * (components/layout/shortcuts-script.tsx): Esc works from the first paint, as a plain navigation
 * before hydration and a client-side one after.
 */
export function EscapeBack({ href }: { href: string }) {
  return <Link href={href} prefetch={false} hidden tabIndex={-1} data-escape-back="" aria-hidden="true" />;
}
