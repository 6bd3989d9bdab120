import { describe, expect, it } from "vitest";
import { letterLabels, pagingNote, readNotice, unreachedNote } from "./wording";

const rabbit = {
  caps: { readHidesLetters: false, readCountsAsDelivery: false, randomAccess: false },
  vocab: { queue: "queue", letterId: "message id", origin: "origin queue" },
};
const sqs = {
  caps: { readHidesLetters: true, readCountsAsDelivery: true, randomAccess: false, stableOrder: false },
  vocab: { queue: "queue", letterId: "MessageId", origin: "source queue" },
};
const kafka = {
  caps: { readHidesLetters: false, readCountsAsDelivery: false, randomAccess: true },
  vocab: { queue: "topic", letterId: "offset", origin: "original topic" },
};

describe("readNotice", () => {
  it("never calls a read non-destructive where the DLQ counts reads against its letters, on any broker", () => {
    const risk = { kind: "delivery-limit" as const, message: "limit 3", limit: 3 };
    for (const b of [rabbit, sqs, kafka]) {
      const n = readNotice(b.caps, b.vocab, { queueType: "quorum", readRisk: risk });
      expect(n.tone).toBe("danger");
      expect(n.text).not.toMatch(/non-destructive/i);
      expect(n.text).toContain("snapshot");
    }
  });
  it("keeps the non-destructive note for a broker that returns letters, with order for classic queues", () => {
    expect(readNotice(rabbit.caps, rabbit.vocab, { queueType: "classic" })).toEqual({
      tone: "info",
      text: "Reading is non-destructive: letters are read without acknowledgement and return to the queue in their original order.",
    });
    expect(readNotice(rabbit.caps, rabbit.vocab, { queueType: "quorum" }).text).not.toMatch(/order/);
  });

  it("warns that reads hide letters and raise the receive count", () => {
    const n = readNotice(sqs.caps, sqs.vocab);
    expect(n.tone).toBe("warn");
    expect(n.text).toMatch(/^Browsing hides the letters read/);
    expect(n.text).toMatch(/raises their receive count/);
    expect(n.text).toMatch(/gives them back as soon as the page is read/);
  });

  it("hides without counting when only readHidesLetters is set", () => {
    expect(readNotice({ ...sqs.caps, readCountsAsDelivery: false }, sqs.vocab).text).not.toMatch(/receive count/);
  });

  it("says a random-access read commits nothing, in the broker's words", () => {
    const n = readNotice(kafka.caps, kafka.vocab);
    expect(n).toEqual({
      tone: "info",
      text: "Reading is non-destructive: letters are read by offset from the topic's log, and nothing is committed or consumed.",
    });
  });

  it("mentions deliveries when a returning read counts as one", () => {
    const n = readNotice({ ...rabbit.caps, readCountsAsDelivery: true }, rabbit.vocab);
    expect(n.tone).toBe("warn");
    expect(n.text).toMatch(/counts each read as a delivery/);
  });
});

describe("pagingNote", () => {
  it("is null unless order is declared unstable", () => {
    expect(pagingNote(rabbit.caps, rabbit.vocab)).toBeNull();
    expect(pagingNote({ ...rabbit.caps, stableOrder: true }, rabbit.vocab)).toBeNull();
    expect(pagingNote(sqs.caps, sqs.vocab)).toMatch(/no fixed order: positions are those of this read/);
  });
});

describe("unreachedNote", () => {
  it("quotes the adapter's reason after a colon, its sentence case lowered but not an acronym's", () => {
    expect(unreachedNote({ reason: "3 letters were in flight, held by another reader or consumer." }, "queue")).toBe(
      "Not every letter of this queue is on these pages: 3 letters were in flight, held by another reader or consumer.",
    );
    expect(unreachedNote({ reason: "The read stopped at 9 letters." }, "queue")).toBe(
      "Not every letter of this queue is on these pages: the read stopped at 9 letters.",
    );
    expect(unreachedNote({ reason: "SQS did not answer." }, "topic")).toBe(
      "Not every letter of this topic is on these pages: SQS did not answer.",
    );
  });
});

describe("letterLabels", () => {
  it("takes words from the vocabulary and the count label from capabilities", () => {
    expect(letterLabels(rabbit.caps, rabbit.vocab)).toEqual({
      origin: "Origin queue",
      letterId: "Message id",
      count: "Count",
      queue: "queue",
    });
    expect(letterLabels(sqs.caps, sqs.vocab)).toEqual({
      origin: "Source queue",
      letterId: "MessageId",
      count: "Receive count",
      queue: "queue",
    });
    expect(letterLabels(kafka.caps, kafka.vocab)).toMatchObject({
      origin: "Original topic",
      letterId: "Offset",
      queue: "topic",
    });
  });
});
