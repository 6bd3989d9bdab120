"use client";

import { useSyncExternalStore } from "react";

const subscribe = () => () => {};

/**
 * False in the server render and until React has hydrated this component, true after. Controls whose
 * behaviour lives in an event handler stay disabled until then, so a click or an Enter that lands
 * before hydration is not lost (or, for a form, sent as a plain GET with its fields in the URL).
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
}
