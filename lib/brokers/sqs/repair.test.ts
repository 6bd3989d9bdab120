import { describe, expect, it } from "vitest";
import { isManagedHeader } from "@/lib/connections/managed-headers";
import type { Message, MessageAttributeValue } from "@aws-sdk/client-sqs";
import { REDRIVE_HEADERS, REPAIR_HEADER, type RedriveMarkers } from "@/lib/brokers/contract/markers";
import type { LetterRepair } from "@/lib/brokers/contract/move";
import { toLetter } from "@/lib/brokers/sqs/letter";
import { COMBINED_MARKER, readMarkers, withMarkers } from "@/lib/brokers/sqs/markers";
import { sendEntryFor } from "@/lib/brokers/sqs/send-entry";
import { attributeNameProblem, repairedAttributes, repairedBodyText, sqsRepairRefusal } from "@/lib/brokers/sqs/repair";

const repairRequestProblem = (repair: LetterRepair) => sqsRepairRefusal(repair, isManagedHeader);

const op = "0b7c1d7e-4a61-4f43-a2a4-8d1a8f0c9e11";
const marks: RedriveMarkers = {
  redriveId: op,
  replayId: "11111111-2222-3333-4444-555555555555",
  redriveCount: 1,
  originalMessageId: null,
};
const bytes = (s: string) => new TextEncoder().encode(s);
const attrs = (n: number): Record<string, MessageAttributeValue> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, { DataType: "String", StringValue: `v${i}` }]));
const repair = (r: Omit<LetterRepair, "operationId">): LetterRepair => ({ ...r, operationId: op });

describe("repair checks that need no letter", () => {
  it("accepts a plain edit", () => {
    expect(
      repairRequestProblem(
        repair({
          body: bytes('{"status":"PAID"}'),
          setHeaders: { "x-tenant": "eu" },
          removeHeaders: ["x-debug"],
          correlationId: "c-2",
        }),
      ),
    ).toBeNull();
  });

  it("refuses names the console or the broker manages, whatever their case", () => {
    const edits: Array<Omit<LetterRepair, "operationId">> = [
      { setHeaders: { [REDRIVE_HEADERS.redriveCount]: "0" } },
      { removeHeaders: [REPAIR_HEADER] },
      { setHeaders: { "X-Death": "x" } },
      { removeHeaders: [COMBINED_MARKER] },
      { setHeaders: { "kafka_dlt-original-topic": "t" } },
    ];
    for (const r of edits) {
      expect(repairRequestProblem(repair(r)), JSON.stringify(r)).toMatch(
        /is kept by the broker or the console .* cannot be changed by a repair\. Nothing was published; the letter stays in the DLQ\.$/,
      );
    }
  });

  it("refuses what SQS would refuse: bad names, reserved prefixes, empty or control-character values", () => {
    expect(attributeNameProblem("ok.name-1_2")).toBeNull();
    expect(attributeNameProblem("has space")).toMatch(/letters, digits/);
    expect(attributeNameProblem(".lead")).toMatch(/period/);
    expect(attributeNameProblem("a..b")).toMatch(/period/);
    expect(attributeNameProblem("AWS.thing")).toMatch(/reserves/);
    expect(attributeNameProblem("amazon.x")).toMatch(/reserves/);
    expect(attributeNameProblem("x".repeat(257))).toMatch(/256/);
    expect(repairRequestProblem(repair({ setHeaders: { "x-a": "" } }))).toMatch(/empty/);
    expect(repairRequestProblem(repair({ setHeaders: { "x-a": "bell\u0007" } }))).toMatch(/characters SQS refuses/);
    expect(repairRequestProblem(repair({ setHeaders: { "x-a": "v" }, removeHeaders: ["x-a"] }))).toMatch(
      /both set and removed/,
    );
  });

  it("a new body must be SQS text: valid UTF-8, allowed characters, not empty; a byte order mark is kept", () => {
    expect(repairRequestProblem(repair({ body: Uint8Array.from([0xc3, 0x28]) }))).toMatch(/not valid UTF-8/);
    expect(repairRequestProblem(repair({ body: Uint8Array.from([0x41, 0x00, 0x42]) }))).toMatch(
      /characters SQS refuses/,
    );
    expect(repairRequestProblem(repair({ body: new Uint8Array() }))).toMatch(/empty/);
    const bom = Uint8Array.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]);
    const t = repairedBodyText(bom);
    if ("reason" in t) throw new Error(t.reason);
    expect(Buffer.from(t.text, "utf8").equals(Buffer.from(bom))).toBe(true);
  });

  it("a new correlation id that contradicts the edits is refused", () => {
    expect(repairRequestProblem(repair({ correlationId: "c", removeHeaders: ["correlation-id"] }))).toMatch(/removed/);
    expect(repairRequestProblem(repair({ correlationId: "c", setHeaders: { correlationId: "d" } }))).toMatch(
      /other than the new correlation id/,
    );
    expect(repairRequestProblem(repair({ correlationId: "c", setHeaders: { correlationId: "c" } }))).toBeNull();
  });
});

describe("repaired attributes", () => {
  const msg = (a: Record<string, MessageAttributeValue>): Message => ({
    MessageId: "m-1",
    Body: "b",
    MessageAttributes: a,
    Attributes: { AWSTraceHeader: "Root=1" },
  });

  it("sets as String (replacing any type), removes, keeps everything else with its type", () => {
    const own: Record<string, MessageAttributeValue> = {
      amount: { DataType: "Number", StringValue: "12.50" },
      blob: { DataType: "Binary.proto", BinaryValue: Uint8Array.from([0, 255]) },
      tenant: { DataType: "String.tenant", StringValue: "acme" },
      debug: { DataType: "String", StringValue: "x" },
    };
    const r = repairedAttributes(
      msg(own),
      repair({ setHeaders: { amount: "13.00", added: "yes" }, removeHeaders: ["debug", "absent"] }),
    );
    if ("reason" in r) throw new Error(r.reason);
    expect(r.attributes).toEqual({
      amount: { DataType: "String", StringValue: "13.00" },
      blob: own.blob,
      tenant: own.tenant,
      added: { DataType: "String", StringValue: "yes" },
    });
  });

  it("SQS system attributes cannot be named, unless the letter has a message attribute of that name", () => {
    expect(repairedAttributes(msg({}), repair({ setHeaders: { AWSTraceHeader: "Root=2" } }))).toMatchObject({
      reason: expect.stringMatching(/SQS system attribute/),
    });
    expect(repairedAttributes(msg({}), repair({ removeHeaders: ["MessageGroupId"] }))).toMatchObject({
      reason: expect.stringMatching(/SQS system attribute/),
    });
    const own = repairedAttributes(
      msg({ SenderId: { DataType: "String", StringValue: "app" } }),
      repair({ setHeaders: { SenderId: "app2" } }),
    );
    expect(own).toEqual({ attributes: { SenderId: { DataType: "String", StringValue: "app2" } } });
  });

  it("correlation id: written to the letter's own correlation attributes, else to a new correlation-id; it reads back", () => {
    const has = repairedAttributes(
      msg({ correlationId: { DataType: "String", StringValue: "old" } }),
      repair({ correlationId: "new" }),
    );
    expect(has).toEqual({ attributes: { correlationId: { DataType: "String", StringValue: "new" } } });
    const none = repairedAttributes(msg({}), repair({ correlationId: "new" }));
    expect(none).toEqual({ attributes: { "correlation-id": { DataType: "String", StringValue: "new" } } });
    if ("reason" in none) throw new Error(none.reason);
    expect(
      toLetter({ MessageId: "m", Body: "b", MessageAttributes: none.attributes }, "m", 0, {
        soleSource: null,
        configOrigin: null,
      }).correlationId,
    ).toBe("new");
  });

  it("the 10-attribute limit counts the markers: 9 own is the most, old markers do not count", () => {
    expect(repairedAttributes(msg(attrs(9)), repair({ setHeaders: { extra: "x" } }))).toMatchObject({
      reason: expect.stringMatching(/10 message attributes of its own.*Remove 1 more/),
    });
    expect(repairedAttributes(msg(attrs(10)), repair({ removeHeaders: ["a0"] }))).not.toHaveProperty("reason");
    expect(
      repairedAttributes(
        msg({ ...attrs(8), [COMBINED_MARKER]: { DataType: "String", StringValue: "{}" } }),
        repair({ setHeaders: { a9: "x" } }),
      ),
    ).not.toHaveProperty("reason");
  });
});

describe("the repair marker in the attribute budget", () => {
  const marks: RedriveMarkers = {
    redriveId: op,
    replayId: "11111111-2222-3333-4444-555555555555",
    redriveCount: 1,
    originalMessageId: "m-1",
  };
  it("5 own → five separate markers; 6 to 9 own → combined with repairedByOperation, read back as headers", () => {
    const five = withMarkers(attrs(5), { ...marks, repairedByOperation: op });
    if ("error" in five) throw new Error(five.error);
    expect(five.form).toBe("separate");
    expect(Object.keys(five.attributes)).toHaveLength(10);
    expect(five.attributes[REPAIR_HEADER]).toEqual({ DataType: "String", StringValue: op });
    const six = withMarkers(attrs(6), { ...marks, repairedByOperation: op });
    if ("error" in six) throw new Error(six.error);
    expect(six.form).toBe("combined");
    expect(readMarkers(six.attributes).repairedByOperation).toBe(op);
    const l = toLetter({ MessageId: "m", Body: "b", MessageAttributes: six.attributes }, "m", 0, {
      soleSource: null,
      configOrigin: null,
    });
    expect(l.headers.find((h) => h.name === REPAIR_HEADER)?.value).toEqual({ t: "string", v: op });
  });

  it("a later plain redrive keeps the repair marker, in either form; without one nothing changes", () => {
    const repaired = withMarkers(attrs(2), { ...marks, repairedByOperation: op });
    if ("error" in repaired) throw new Error(repaired.error);
    const again = withMarkers(repaired.attributes, { ...marks, redriveCount: 2 });
    if ("error" in again) throw new Error(again.error);
    expect(again.attributes[REPAIR_HEADER]?.StringValue).toBe(op);
    expect(Object.keys(again.attributes)).toHaveLength(7);
    const crowded = withMarkers(attrs(9), { ...marks, repairedByOperation: op });
    if ("error" in crowded) throw new Error(crowded.error);
    const crowdedAgain = withMarkers(crowded.attributes, { ...marks, redriveCount: 2 });
    if ("error" in crowdedAgain) throw new Error(crowdedAgain.error);
    expect(readMarkers(crowdedAgain.attributes)).toMatchObject({ redriveCount: 2, repairedByOperation: op });
    const plain = withMarkers(attrs(6), marks);
    if ("error" in plain) throw new Error(plain.error);
    expect(plain.form).toBe("separate");
    expect(plain.attributes).not.toHaveProperty(REPAIR_HEADER);
  });
});

describe("the send entry of a repaired letter", () => {
  const fifoMsg: Message = {
    MessageId: "m-2",
    Body: '{"status":"PAYED"}',
    MessageAttributes: {
      "x-app": { DataType: "String", StringValue: "a" },
      [REDRIVE_HEADERS.originalMessageId]: { DataType: "String", StringValue: "m-first" },
    },
    Attributes: { AWSTraceHeader: "Root=1-abc", MessageGroupId: "g", MessageDeduplicationId: "old" },
  };

  it("new body, edits, markers with the repair operation; keeps the first message id the letter ever had, as a redrive does; FIFO group kept, new deduplication id", () => {
    const r = sendEntryFor(
      fifoMsg,
      marks,
      { name: "q.fifo", fifo: true },
      true,
      repair({ body: bytes('{"status":"PAID"}'), setHeaders: { "x-fixed": "1" } }),
    );
    if ("reason" in r) throw new Error(r.reason);
    expect(r.entry.MessageBody).toBe('{"status":"PAID"}');
    const a = r.entry.MessageAttributes!;
    expect(a["x-app"].StringValue).toBe("a");
    expect(a["x-fixed"].StringValue).toBe("1");
    expect(a[REPAIR_HEADER].StringValue).toBe(op);
    expect(a[REDRIVE_HEADERS.originalMessageId].StringValue).toBe("m-first");
    expect(a[REDRIVE_HEADERS.replayId].StringValue).toBe(marks.replayId);
    expect(r.entry.MessageSystemAttributes?.AWSTraceHeader?.StringValue).toBe("Root=1-abc");
    expect(r.entry).toMatchObject({ MessageGroupId: "g", MessageDeduplicationId: marks.replayId });
  });

  it("without a new body the received text is sent as it is", () => {
    const r = sendEntryFor(fifoMsg, marks, { name: "q.fifo", fifo: true }, true, repair({ removeHeaders: ["x-app"] }));
    if ("reason" in r) throw new Error(r.reason);
    expect(r.entry.MessageBody).toBe(fifoMsg.Body);
    expect(r.entry.MessageAttributes).not.toHaveProperty("x-app");
  });
});
