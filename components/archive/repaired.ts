/**
 * Which archive entries are the originals of a repair. A repair archives the original
 * under the repair's operation id with the reason "Repaired and resubmitted: <the admin's reason>"
 * (lib/repair/use-cases.ts for one letter, lib/redrive/handler.ts for a group repair): that prefix
 * is what tells them apart from discards, since the archive row has no kind of its own.
 */
const PREFIX = "Repaired and resubmitted:";

export function isRepairedOriginal(discardReason: string): boolean {
  return discardReason.startsWith(PREFIX);
}

/** The admin's own reason, without the prefix the badge already says. */
export function repairReason(discardReason: string): string {
  return isRepairedOriginal(discardReason) ? discardReason.slice(PREFIX.length).trim() : discardReason;
}

/** Put back on a repaired original: the repaired copy is still out there, so the DLQ would hold a second copy of the letter. */
export const REPAIRED_PUT_BACK_WARNING =
  "This letter was repaired and resubmitted; putting the original back makes a second copy in the DLQ.";

/** The archive chip's short form of an operation id. */
export const shortOperation = (id: string) => (id.length > 8 ? `${id.slice(0, 8)}…` : id);
