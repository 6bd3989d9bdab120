import { describe, expect, it } from "vitest";
import { isManagedHeader } from "@/lib/connections/managed-headers";
import { AppError } from "@/lib/errors";
import { HeldKeys, OneAtATime, RequestBook, moveWords, repairRefusal, sameChecksum } from "@/lib/brokers/move-rules";

const twinOf = (id: string) => id.replace(/~[1-9][0-9]*$/, "");
const req = (letterId: string, sha256 = "ab") => ({ letterId, sha256 });

describe("RequestBook", () => {
  it("keeps one request per letter id: a repeat is handled once", () => {
    const book = new RequestBook([req("a"), req("b"), req("a", "ff")]);
    expect(book.size).toBe(2);
    expect(book.take(req("a"))).toEqual(req("a"));
    expect(book.take(req("a"))).toBeNull();
    expect(book.pending()).toEqual([req("b")]);
  });

  it("answers a twin's request with any letter of the same content still in the DLQ", () => {
    // k-X left in an earlier call; the DLQ's remaining twin is listed as k-X again.
    const book = new RequestBook([req("k-X~2"), req("k-Y")], twinOf);
    expect(book.take(req("k-X"))).toEqual(req("k-X~2"));
    expect(book.take(req("k-Y"))).toEqual(req("k-Y"));
    expect(book.size).toBe(0);
  });

  it("prefers a letter's own request to a twin's", () => {
    const book = new RequestBook([req("k-X~2"), req("k-X")], twinOf);
    expect(book.take(req("k-X"))?.letterId).toBe("k-X");
    expect(book.take(req("k-X~2"))?.letterId).toBe("k-X~2");
  });

  it("does not count a letter with other bytes as a twin", () => {
    const book = new RequestBook([req("k-X~2", "aa")], twinOf);
    expect(book.take(req("k-X", "bb"))).toBeNull();
    expect(book.size).toBe(1);
  });

  it("hands a letter's own request over whatever its checksum, so the caller can report the mismatch", () => {
    const book = new RequestBook([req("m-1", "aa")]);
    expect(book.take(req("m-1", "bb"))).toEqual(req("m-1", "aa"));
  });

  it("has no twins where the broker gives every letter an identity", () => {
    const book = new RequestBook([req("0-5")]);
    expect(book.take(req("0-6"))).toBeNull();
  });
});

describe("sameChecksum", () => {
  it("compares hex without regard to case or surrounding space", () => {
    expect(sameChecksum("ABCDEF01", "abcdef01")).toBe(true);
    expect(sameChecksum(" abcdef01\n", "ABCDEF01")).toBe(true);
    expect(sameChecksum("abcdef01", "abcdef02")).toBe(false);
  });
});

describe("HeldKeys", () => {
  it("holds keys from earlier calls and from failures, never a letter without a key", () => {
    const held = new HeldKeys(["k1"]);
    expect(held.isHeld("k1")).toBe(true);
    expect(held.isHeld("k2")).toBe(false);
    held.hold("k2");
    held.hold(null);
    expect(held.isHeld("k2")).toBe(true);
    expect(held.isHeld(null)).toBe(false);
  });
});

describe("OneAtATime", () => {
  it("runs tasks one after another in the order given, a failure not stopping the next", async () => {
    const q = new OneAtATime();
    const log: string[] = [];
    let release!: () => void;
    const first = q.run(async () => {
      log.push("1 start");
      await new Promise<void>((r) => (release = r));
      log.push("1 end");
      throw new Error("archive down");
    });
    const second = q.run(async () => {
      log.push("2");
      return 2;
    });
    await Promise.resolve();
    expect(log).toEqual(["1 start"]);
    release();
    await expect(first).rejects.toThrow("archive down");
    await expect(second).resolves.toBe(2);
    expect(log).toEqual(["1 start", "1 end", "2"]);
  });
});

describe("moveWords", () => {
  it("words each outcome once, with the verb and the broker's noun", () => {
    const move = moveWords("move", "DLT");
    expect(move.mismatch).toContain("it was not moved and stays in the DLT");
    expect(move.missing("orders.DLT")).toContain('Not found in DLT "orders.DLT" when the console looked through it');
    expect(moveWords("discard").mismatch).toContain("it was not discarded and stays in the DLQ");
    expect(move.heldBack("x".repeat(100))).toContain(`"${"x".repeat(80)}…"`);
  });

  it("quotes an operator message of an AppError and never another error's message", () => {
    const words = moveWords("discard");
    expect(
      words.notArchived(new AppError("unavailable:db", { message: "pg down", userMessage: "The archive is full." })),
    ).toBe("Not discarded: The archive is full. The letter stays in the DLQ.");
    expect(words.notArchived(new Error("secret internals"))).not.toContain("secret");
    expect(words.copyNotArchived(new Error("x"), 'queue "q"', "m-1")).toContain("The repaired copy (m-1)");
  });
});

describe("repairRefusal", () => {
  const rules = { noun: "header", managedBy: "the broker or the console", dlq: "DLQ" as const };
  it("refuses managed, unnamed, and both-set-and-removed names, and the broker's own limits", () => {
    expect(repairRefusal({ operationId: "o", setHeaders: { "x-death": "1" } }, rules, isManagedHeader)).toContain(
      'The header "x-death" is kept by the broker or the console',
    );
    expect(repairRefusal({ operationId: "o", removeHeaders: [""] }, rules, isManagedHeader)).toContain(
      "without a name",
    );
    expect(
      repairRefusal({ operationId: "o", setHeaders: { a: "1" }, removeHeaders: ["a"] }, rules, isManagedHeader),
    ).toContain("both set and removed");
    const limited = { ...rules, nameProblem: (n: string) => (n.length > 3 ? `"${n}" is too long.` : null) };
    expect(repairRefusal({ operationId: "o", setHeaders: { long: "1" } }, limited, isManagedHeader)).toBe(
      '"long" is too long. Nothing was published; the letter stays in the DLQ.',
    );
    expect(repairRefusal({ operationId: "o", refuse: "Not repaired: no patch." }, rules, isManagedHeader)).toBe(
      "Not repaired: no patch.",
    );
    expect(repairRefusal({ operationId: "o", setHeaders: { ok: "1" } }, rules, isManagedHeader)).toBeNull();
  });
});
