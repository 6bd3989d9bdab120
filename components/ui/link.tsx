"use client";

import NextLink from "next/link";
import { AppRouterContext } from "next/dist/shared/lib/app-router-context.shared-runtime";
import { type ComponentProps, type FocusEvent, type MouseEvent, type TouchEvent, useContext } from "react";

/**
 * The console's link: Next's, prefetched when a user shows intent (pointer over it, keyboard focus,
 * a touch), not when it scrolls into view. Every page here is rendered on demand, so Next's default
 * would ask the server for every visible link on every load: a list of letters or findings meant
 * dozens of requests competing with the page's own on a small machine. A link that sets
 * `prefetch` itself keeps Next's behaviour for that value.
 */
export default function Link({
  prefetch,
  onMouseEnter,
  onFocus,
  onTouchStart,
  ...props
}: ComponentProps<typeof NextLink>) {
  // The context, not useRouter(): outside an app router (a component rendered on its own, as in a
  // unit test) it is null, and a link there is still a link with nothing to prefetch with.
  const router = useContext(AppRouterContext);
  if (prefetch !== undefined)
    return (
      <NextLink
        {...props}
        prefetch={prefetch}
        onMouseEnter={onMouseEnter}
        onFocus={onFocus}
        onTouchStart={onTouchStart}
      />
    );
  const href = typeof props.href === "string" ? props.href : null;
  const intent = () => {
    if (href) router?.prefetch(href);
  };
  return (
    <NextLink
      {...props}
      prefetch={false}
      onMouseEnter={(e: MouseEvent<HTMLAnchorElement>) => {
        intent();
        onMouseEnter?.(e);
      }}
      onFocus={(e: FocusEvent<HTMLAnchorElement>) => {
        intent();
        onFocus?.(e);
      }}
      onTouchStart={(e: TouchEvent<HTMLAnchorElement>) => {
        intent();
        onTouchStart?.(e);
      }}
    />
  );
}
