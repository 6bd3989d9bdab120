import { describe, expect, it } from "vitest";
import { isManagedHeader } from "@/lib/connections/managed-headers";
import { AppError } from "@/lib/errors";
import { REDRIVE_HEADERS, REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import type { LetterRepair } from "@/lib/brokers/contract/move";
import { decodeFieldTable } from "@/lib/brokers/rabbitmq/field-table";
import {
  int32Entry,
  longstrEntry,
  parseProperties,
  rebuildProperties,
  shortstrOf,
  tableEntries,
} from "@/lib/brokers/rabbitmq/amqp-properties";
import { moveWords, repairRefusal } from "@/lib/brokers/move-rules";
import { REPAIR_RULES, repairEditsOf } from "@/lib/brokers/rabbitmq/repair";

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const sstr = (s: string) => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)]);
const rawEntry = (name: Buffer, tag: string, payload: Buffer) =>
  Buffer.concat([Buffer.from([name.length]), name, Buffer.from(tag), payload]);

/** content-type, headers, correlation-id, message-id, timestamp: as a producer's client would send them. */
function props(table: Buffer, correlationId: string | null) {
  const t = Buffer.alloc(8);
  t.writeBigUInt64BE(1700000000n);
  const flags = 0x8000 | 0x2000 | (correlationId === null ? 0 : 0x0400) | 0x0080 | 0x0040;
  const parts = [
    sstr("application/json"),
    u32(table.length),
    table,
    ...(correlationId === null ? [] : [sstr(correlationId)]),
    sstr("m-1"),
    t,
  ];
  return Buffer.concat([Buffer.from([flags >> 8, flags & 0xff]), ...parts]);
}

const big = Buffer.alloc(8);
big.writeBigInt64BE(9007199254740993n);
const utf8Name = Buffer.from("x-région", "utf8");
const table = Buffer.concat([
  longstrEntry("x-tenant", "acme"),
  rawEntry(Buffer.from("x-big"), "l", big),
  int32Entry("x-schema", 1),
  rawEntry(utf8Name, "S", Buffer.concat([u32(2), Buffer.from("eu")])),
  longstrEntry("x-debug", "remove me"),
  rawEntry(Buffer.from("x-death"), "A", u32(0)),
]);
const markers = { redriveId: "op-1", replayId: "replay-1", redriveCount: 1, originalMessageId: "m-1" };

describe("rebuildProperties with a repair's edits", () => {
  it("replaces edited headers in place as longstr, appends new ones, drops removed ones, and copies every other entry byte for byte", () => {
    const raw = props(table, "corr-1");
    const edits = repairEditsOf(
      {
        operationId: "op-1",
        setHeaders: { "x-schema": "2", "x-région": "us", "x-new": "added" },
        removeHeaders: ["x-debug", "x-absent"],
      },
      "replay-1",
    );
    const out = rebuildProperties(raw, markers, edits);
    const entries = tableEntries(parseProperties(out).fields.get(0x2000)!.subarray(4));
    const before = tableEntries(table);
    expect(entries.map((e) => Buffer.from(e.name, "latin1").toString("utf8"))).toEqual([
      "x-tenant",
      "x-big",
      "x-schema",
      "x-région",
      "x-death",
      "x-new",
      REPAIR_HEADER,
      REDRIVE_HEADERS.redriveId,
      REDRIVE_HEADERS.replayId,
      REDRIVE_HEADERS.redriveCount,
      REDRIVE_HEADERS.originalMessageId,
    ]);
    // Untouched entries keep their exact bytes (the 64-bit integer, x-death).
    for (const i of [0, 1]) expect(entries[i].bytes.equals(before[i].bytes)).toBe(true);
    expect(entries[4].bytes.equals(before[5].bytes)).toBe(true);
    // The edited int32 entry became a longstr ('S'), in the same place; the UTF-8 name matched by its bytes.
    expect(entries[2].bytes.equals(longstrEntry("x-schema", "2"))).toBe(true);
    const decoded = decodeFieldTable(parseProperties(out).fields.get(0x2000)!.subarray(4));
    expect(decoded.find((h) => h.name === "x-région")!.value).toEqual({ t: "string", v: "us" });
    expect(decoded.find((h) => h.name === REPAIR_HEADER)!.value).toEqual({ t: "string", v: "op-1" });
    expect(decoded.find((h) => h.name === REDRIVE_HEADERS.originalMessageId)!.value).toEqual({ t: "string", v: "m-1" });
  });

  it("sets message-id to the new id; correlation-id only when given; every other property byte for byte", () => {
    const raw = props(table, "corr-1");
    const before = parseProperties(raw);
    const kept = parseProperties(rebuildProperties(raw, markers, repairEditsOf({ operationId: "op-1" }, "replay-1")));
    expect(shortstrOf(kept, 0x0080)!.toString()).toBe("replay-1");
    expect(shortstrOf(kept, 0x0400)!.toString()).toBe("corr-1");
    for (const flag of [0x8000, 0x0040]) expect(kept.fields.get(flag)!.equals(before.fields.get(flag)!)).toBe(true);
    expect([...kept.fields.get(0x1000)!]).toEqual([2]);

    const changed = parseProperties(
      rebuildProperties(raw, markers, repairEditsOf({ operationId: "op-1", correlationId: "corr-2" }, "replay-1")),
    );
    expect(shortstrOf(changed, 0x0400)!.toString()).toBe("corr-2");
    // A letter without a correlation id gets the property added, in its wire position.
    const added = parseProperties(
      rebuildProperties(
        props(table, null),
        markers,
        repairEditsOf({ operationId: "op-1", correlationId: "corr-3" }, "replay-1"),
      ),
    );
    expect(shortstrOf(added, 0x0400)!.toString()).toBe("corr-3");
    expect(shortstrOf(added, 0x0080)!.toString()).toBe("replay-1");
  });
});

describe("repairRefusal with RabbitMQ's rules", () => {
  const refusal = (r: Omit<LetterRepair, "operationId">) =>
    repairRefusal({ operationId: "op", ...r }, REPAIR_RULES, isManagedHeader);

  it("refuses broker-managed and console headers, whether set or removed, in any case", () => {
    const edits: Array<Omit<LetterRepair, "operationId">> = [
      { setHeaders: { "x-dlq-redrive-count": "0" } },
      { removeHeaders: ["x-death"] },
      { setHeaders: { "X-First-Death-Queue": "q" } },
      { removeHeaders: ["x-delivery-count"] },
    ];
    for (const r of edits) {
      expect(refusal(r), JSON.stringify(r)).toMatch(
        /kept by RabbitMQ or the console .* cannot be changed by a repair.*Nothing was published; the letter stays in the DLQ/,
      );
    }
  });

  it("refuses names RabbitMQ cannot carry, a name both set and removed, and a correlation id over 255 bytes", () => {
    expect(refusal({ setHeaders: { "": "v" } })).toMatch(/header without a name/);
    expect(refusal({ removeHeaders: ["é".repeat(128)] })).toMatch(/not one RabbitMQ accepts \(1 to 255 bytes\)/);
    expect(refusal({ setHeaders: { ["é".repeat(127)]: "v" } })).toBeNull(); // 254 bytes
    expect(refusal({ setHeaders: { "x-a": "1" }, removeHeaders: ["x-a"] })).toMatch(/both set and removed/);
    expect(refusal({ correlationId: "c".repeat(256) })).toMatch(
      /longer than RabbitMQ's 255 bytes\. Nothing was published/,
    );
    expect(refusal({ correlationId: "é".repeat(128) })).toMatch(/255 bytes/); // 256 bytes in UTF-8
    expect(refusal({ setHeaders: { "x-a": "1" }, removeHeaders: ["x-b"], correlationId: "c".repeat(255) })).toBeNull();
    expect(refusal({ refuse: "Not repaired: the patch does not apply." })).toBe(
      "Not repaired: the patch does not apply.",
    );
  });
});

describe("the words for a repaired copy whose original could not be archived", () => {
  it("says the copy was published and the original stays, quoting an operator message but never a raw one", () => {
    const words = moveWords("move");
    const raw = words.copyNotArchived(
      new Error("connection terminated: pg secret"),
      'default exchange, routing key "q" (queue "q")',
      "replay-1",
    );
    expect(raw).toMatch(/repaired copy \(replay-1\) was published/);
    expect(raw).toMatch(/original stays in the DLQ/);
    expect(raw).not.toContain("pg secret");
    const app = words.copyNotArchived(
      new AppError("unavailable:database", { message: "x", userMessage: "The archive is unavailable." }),
      "q",
      null,
    );
    expect(app).toContain("The archive is unavailable");
  });
});
