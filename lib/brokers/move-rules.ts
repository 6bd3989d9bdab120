/**
 * The rules every mover applies the same way, whatever the broker: which request a letter found in
 * the DLQ answers (repeats, twins, checksums), which keys are held back, the archive hook one
 * letter at a time, which repairs are refused, and the words an operator reads for each outcome.
 * A broker's mover supplies only transport: find letters in DLQ order, publish with confirmation,
 * remove. A case two brokers answer differently is a bug until the contract suite says why.
 */
import { isAppError } from "@/lib/errors";
import type { ManagedHeaderMatcher } from "@/lib/brokers/contract/markers";
import type { LetterRepair } from "@/lib/brokers/contract/move";

/** What the call does to a letter, for the operator's words ("it was not moved"). */
export type MoveVerb = "move" | "discard";
const PAST: Record<MoveVerb, string> = { move: "moved", discard: "discarded" };

/** A checksum as recorded: hex, compared without regard to case or surrounding space. */
export function normalChecksum(hex: string): string {
  return hex.trim().toLowerCase();
}

export function sameChecksum(recorded: string, actual: string): boolean {
  return normalChecksum(recorded) === normalChecksum(actual);
}

/**
 * The requests of one call, and which of them a letter found in the DLQ answers.
 *
 * - A letter id requested more than once is one request: it is handled once and gets one result
 *   (the first request wins; later repeats are dropped, whatever their checksum).
 * - Twins: where a broker gives content-identical letters no identity of their own (RabbitMQ
 *   letters without a message id, told apart only by their order: `k-X`, `k-X~2`), `twinOf` names
 *   the content they share, and a request for one of them is answered by any letter with that
 *   content still in the DLQ. The letter's own id is tried first.
 */
export class RequestBook<R extends { letterId: string; sha256: string }> {
  private readonly byId = new Map<string, R>();
  private readonly byTwin = new Map<string, Set<string>>();

  constructor(
    requests: readonly R[],
    private readonly twinOf: (letterId: string) => string | null = () => null,
  ) {
    for (const r of requests) {
      if (this.byId.has(r.letterId)) continue;
      this.byId.set(r.letterId, r);
      const twin = twinOf(r.letterId);
      if (twin === null) continue;
      const ids = this.byTwin.get(twin) ?? new Set<string>();
      ids.add(r.letterId);
      this.byTwin.set(twin, ids);
    }
  }

  /** Requests not answered yet. */
  get size(): number {
    return this.byId.size;
  }

  /** The outstanding requests, in the order they were made. */
  pending(): R[] {
    return [...this.byId.values()];
  }

  /** The outstanding request for exactly this letter id (not a twin), without taking it. */
  get(letterId: string): R | undefined {
    return this.byId.get(letterId);
  }

  /**
   * The request this letter answers, taken out of the book; null when it answers none. Its own id
   * first, whatever the checksum (the caller compares and reports a mismatch); else an outstanding
   * request for a twin with the same checksum (a twin whose bytes differ is not a twin).
   */
  take(found: { letterId: string; sha256: string }): R | null {
    const own = this.byId.get(found.letterId);
    if (own) return this.remove(own);
    const twin = this.twinOf(found.letterId);
    const ids = twin === null ? undefined : this.byTwin.get(twin);
    if (!ids) return null;
    for (const id of ids) {
      const r = this.byId.get(id)!;
      if (sameChecksum(r.sha256, found.sha256)) return this.remove(r);
    }
    return null;
  }

  private remove(r: R): R {
    this.byId.delete(r.letterId);
    const twin = this.twinOf(r.letterId);
    if (twin !== null) {
      const ids = this.byTwin.get(twin);
      ids?.delete(r.letterId);
      if (ids?.size === 0) this.byTwin.delete(twin);
    }
    return r;
  }
}

/**
 * Ordering keys of which a letter is still in the DLQ after failing: a later letter of the same key
 * is held back ("failed"), so it is never moved past it. Starts with `MoveOptions.heldKeys` (keys
 * held by an earlier call of the same job). A letter without a key is never held.
 */
export class HeldKeys {
  private readonly keys: Set<string>;
  /** The letter of this call that first held a key (absent: held by an earlier call). */
  private readonly by = new Map<string, string>();
  constructor(initial: Iterable<string> = []) {
    this.keys = new Set(initial);
  }
  isHeld(key: string | null): key is string {
    return key !== null && this.keys.has(key);
  }
  /** `by`: the letter of this call that failed and holds the key (kept for `reason`; the first one wins). */
  hold(key: string | null, by?: string): void {
    if (key === null) return;
    if (by !== undefined && !this.keys.has(key)) this.by.set(key, by);
    this.keys.add(key);
  }
  /**
   * Why a letter of a held key stays: `heldBack` when an earlier call held the key (or the holder
   * was not named), `laneBlocked` naming the letter of this call that holds it.
   */
  reason(key: string, words: Pick<ReturnType<typeof moveWords>, "heldBack" | "laneBlocked">): string {
    const by = this.by.get(key);
    return by === undefined ? words.heldBack(key) : words.laneBlocked(by);
  }
}

/** Runs tasks one at a time, in the order they were handed in (the archive hook: one letter at a time, in DLQ order). */
export class OneAtATime {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.tail.then(task);
    this.tail = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }
}

const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 80)}…` : s);

/**
 * The words an operator reads for each outcome of a move or discard, the same on every broker.
 * `dlq` is the broker's noun for the queue ("DLQ", or "DLT" on Kafka).
 */
export function moveWords(verb: MoveVerb, dlq: "DLQ" | "DLT" = "DLQ") {
  const past = PAST[verb];
  return {
    mismatch: `The letter's bytes no longer match the checksum recorded when it was indexed: it was not ${past} and stays in the ${dlq}. Re-scan the ${dlq} and check it again.`,
    /**
     * Only after the call looked through the whole DLQ as it was when the call started (by id, and
     * by content where letters have no id of their own) and did not find it. `where` names it;
     * `fact` is what the look saw where the broker can say more (Kafka: the offset is below the log start).
     */
    missing: (where: string, fact?: string) =>
      fact
        ? `Not found in ${dlq} "${where}" when the console looked: ${fact}. It was not ${past}.`
        : `Not found in ${dlq} "${where}" when the console looked through it (by id, and by content for letters without an id of their own): it was consumed, moved or expired by someone else since it was indexed.`,
    /**
     * Not found when the call looked, but `count` letters of the DLQ were held by another reader
     * then (received and not yet acknowledged or deleted: SQS in flight, RabbitMQ unacked), so it is
     * most likely one of them. Never "missing": nothing shows it left.
     */
    hiddenByAnotherReader: (count: number) =>
      `Still in the ${dlq}, hidden by another reader: it was not found when the console looked through the ${dlq}, but ${count.toLocaleString("en-US")} letter${count === 1 ? " there was" : "s there were"} held by another reader or consumer (received and not yet acknowledged or deleted), so it is most likely one of them. It was not ${past}; try again once that reader lets it go.`,
    /** Not found in the part of the DLQ the call could look through; `why` says what it could not reach. */
    notReached: (why: string) =>
      `Not ${past}: the console could not look through the whole ${dlq} (${why}) and did not find it in the part it read, so it may still be there. Try again.`,
    /** An id that no letter of this broker can have (`kind`: "an SQS MessageId"): missing without a look. */
    unknownId: (kind: string) => `No letter in the ${dlq} can have this id: it is not ${kind}. Nothing was ${past}.`,
    /** A key held back by an earlier call (`MoveOptions.heldKeys`). */
    heldBack: (key: string) =>
      `Held back: an earlier letter with the same key failed (key "${clip(key)}"), and moving this one would put it ahead of that letter. It stays in the ${dlq}.`,
    /** A key held back in this call, by the letter that failed before it. */
    laneBlocked: (letterId: string) =>
      `Held back to keep the key's order: letter ${letterId} with the same key was not moved. It stays in the ${dlq}.`,
    /** `RemoveOptions.ownIdentityOnly` and a letter identified by its content alone. */
    contentIdentity: `This letter has no id of its own (the broker identifies it by its content), so an identical twin that was never ${past} could answer for it; it was not ${past}, to be sure no twin is lost. The ${dlq} may hold a duplicate of a copy that was ${past} before.`,
    /** `RemoveOptions.beforeRemove` threw: the letter stays, nothing was lost. */
    notArchived: (e: unknown) => {
      const why = isAppError(e) ? e.userMessage.replace(/\.$/, "") : "the console could not record its copy";
      return `Not ${past}: ${why}. The letter stays in the ${dlq}.`;
    },
    /**
     * A repaired letter's copy was confirmed at `where`, but the archive (`MoveOptions.beforeRemove`)
     * threw: the copy is out there and the original stays, so there is now a duplicate.
     */
    copyNotArchived: (e: unknown, where: string, copyId: string | null) => {
      const why = isAppError(e) ? e.userMessage.replace(/\.$/, "") : "the console could not archive the original";
      const copy = copyId ? `The repaired copy (${copyId})` : "The copy";
      return `${copy} was published to ${where} and confirmed, but the original was not removed: ${why}. The original stays in the ${dlq}, so the copy is a duplicate of it; check the target before moving this letter again.`;
    },
  };
}

/** How a broker names what a repair edits, and its own limits on names and values. */
export interface RepairRules {
  /** "header", "property", "message attribute". */
  noun: string;
  /** Who keeps the managed names, e.g. "RabbitMQ or the console (broker history and x-dlq-* markers)". */
  managedBy: string;
  dlq: "DLQ" | "DLT";
  /** Why the broker would refuse this name, or null. */
  nameProblem?: (name: string) => string | null;
  /** Why the broker would refuse the rest of the repair (body, correlation id), or null. */
  otherProblem?: (repair: LetterRepair) => string | null;
}

/**
 * Why this repair cannot be applied to any letter, in the operator's words, or null. The console
 * checks locked fields before it asks (lib/repair); this is every mover's own guard against a
 * crafted request, so a broker-managed or console header is never rewritten, whoever calls.
 * `isManaged` is the adapter's matcher of every broker's and the console's managed names
 * (`AdapterSetup.allManagedHeaders`), not of its own broker's alone.
 */
export function repairRefusal(
  repair: LetterRepair,
  rules: RepairRules,
  isManaged: ManagedHeaderMatcher,
): string | null {
  if (repair.refuse) return repair.refuse;
  const nothing = `Nothing was published; the letter stays in the ${rules.dlq}.`;
  const set = Object.keys(repair.setHeaders ?? {});
  const removed = repair.removeHeaders ?? [];
  const names = [...set, ...removed];
  const managed = [...new Set(names.filter(isManaged))];
  if (managed.length > 0)
    return `The ${rules.noun} ${managed.map((n) => `"${clip(n)}"`).join(", ")} is kept by ${rules.managedBy} and cannot be changed by a repair. ${nothing}`;
  if (names.some((n) => n === "")) return `A ${rules.noun} without a name cannot be set or removed. ${nothing}`;
  for (const n of names) {
    const problem = rules.nameProblem?.(n);
    if (problem) return `${problem} ${nothing}`;
  }
  const both = set.filter((n) => removed.includes(n));
  if (both.length > 0)
    return `The ${rules.noun} ${both.map((n) => `"${clip(n)}"`).join(", ")} is both set and removed by this repair: keep one of the two. ${nothing}`;
  const other = rules.otherProblem?.(repair);
  return other ? `${other} ${nothing}` : null;
}
