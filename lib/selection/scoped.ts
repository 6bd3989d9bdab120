import "server-only";
import type { Actor } from "@/lib/auth/session";
import { maskingPolicy } from "@/lib/masking/policy";
import type { LetterFilter } from "@/lib/triage/queries";
import { scopedFilter } from "@/lib/triage/masked-search";
import { filterOfSelection, type Selection } from "./selection";

/**
 * The index filter a selection stands for, made safe to evaluate for the actor's role
 * (triage/masked-search.ts `scopedFilter`): a header filter naming a value masking would hide is refused.
 */
export async function selectionFor(
  actor: Actor,
  p: { connectionId: string; queue: string; selection: Selection },
): Promise<{ filter: LetterFilter; letterIds?: string[] }> {
  const { filter, letterIds } = filterOfSelection(p, p.selection);
  return { filter: scopedFilter(filter, await maskingPolicy(actor.role, p.connectionId, p.queue)), letterIds };
}
