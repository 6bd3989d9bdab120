"use server";

import { revalidatePath } from "next/cache";
import type { ActionResult } from "@/lib/errors";
import {
  addIssueLink,
  addIssueNote,
  assignIssue,
  changeIssueState,
  changeIssueStates,
  type Assignee,
  type IssueRef,
  type StateChangeInput,
} from "@/lib/issues/use-cases";
import { runAction } from "@/lib/use-case/run-action";

// Each use case authorizes (issues:write) before it validates, so a refused caller is refused and
// audited whatever it sent. The pages under /failures read the result after a refresh.
const refresh = () => revalidatePath("/failures", "layout");

/** Acknowledge, resolve or ignore one failure group. Audited `issue.state_change`. */
export async function changeIssueStateAction(input: unknown): Promise<ActionResult<{ changed: boolean }>> {
  return runAction(async (actor, meta) => {
    const r = await changeIssueState(actor, meta, input as IssueRef & { change: StateChangeInput });
    return { changed: r.changed };
  }, refresh);
}

/** The same change for every group the list's filter matches. Audited per group and once for the whole. */
export async function changeIssueStatesAction(
  input: unknown,
): Promise<ActionResult<{ matched: number; changed: number }>> {
  return runAction(async (actor, meta) => {
    const r = await changeIssueStates(actor, meta, input as { filter: unknown; change: StateChangeInput });
    return { matched: r.matched, changed: r.changed };
  }, refresh);
}

/** Assigns a group to a team of the DLQ owners or a console user; null unassigns. Audited `issue.assign`. */
export async function assignIssueAction(input: unknown): Promise<ActionResult<{ changed: boolean }>> {
  return runAction(async (actor, meta) => {
    const r = await assignIssue(actor, meta, input as IssueRef & { assignee: Assignee | null });
    return { changed: r.changed };
  }, refresh);
}

/** A note on a group. Audited `issue.note` (its length, not its text). */
export async function addIssueNoteAction(input: unknown): Promise<ActionResult<{ id: string }>> {
  return runAction(async (actor, meta) => {
    const e = await addIssueNote(actor, meta, input as IssueRef & { text: string });
    return { id: e.id };
  }, refresh);
}

/** An http(s) link on a group. Audited `issue.link` (its host). */
export async function addIssueLinkAction(input: unknown): Promise<ActionResult<{ id: string }>> {
  return runAction(async (actor, meta) => {
    const e = await addIssueLink(actor, meta, input as IssueRef & { url: string });
    return { id: e.id };
  }, refresh);
}
