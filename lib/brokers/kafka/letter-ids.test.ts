import { describe, expect, it } from "vitest";
import { headerText } from "@/lib/brokers/display";
import { MESSAGE_ID_NAMES, toLetter } from "@/lib/brokers/kafka/letter";

const record = (headers: Record<string, string | string[]>) => ({
  offset: "7",
  timestamp: "1700000000000",
  key: null,
  value: Buffer.from("{}"),
  headers: Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => Buffer.from(x)) : Buffer.from(v)]),
  ),
});

describe("a Kafka letter's message id, correlation id and content type", () => {
  const cases: Array<Record<string, string | string[]>> = [
    {},
    { "kafka_dlt-exception-fqcn": "java.lang.IllegalStateException", "x-app-version": "1" },
    { "Message-Id": "m-upper", messageId: "", "X-Correlation-Id": "c1", "Content-Type": "application/json" },
    { message_id: ["first", "second"], ce_id: "ce", correlationId: "c", contentType: "text/plain" },
    { "MESSAGE-ID": "", "x-message-id": "x", KAFKA_CORRELATIONID: "k", CE_DATACONTENTTYPE: "application/avro" },
  ];

  it("are the first non-empty header of the names asked, exact name before any case (display's headerText)", () => {
    for (const h of cases) {
      const l = toLetter("t.DLT", 0, record(h), 0, { configOrigin: null });
      expect(l.messageId, JSON.stringify(h)).toBe(headerText(l.headers, ...MESSAGE_ID_NAMES));
      expect(l.correlationId, JSON.stringify(h)).toBe(
        headerText(l.headers, "correlation-id", "correlationId", "x-correlation-id", "kafka_correlationId"),
      );
      expect(l.contentType, JSON.stringify(h)).toBe(
        headerText(l.headers, "content-type", "contentType", "ce_datacontenttype"),
      );
    }
  });

  it("reads them in any case", () => {
    const l = toLetter("t.DLT", 0, record(cases[2]), 0, { configOrigin: null });
    expect([l.messageId, l.correlationId, l.contentType]).toEqual(["m-upper", "c1", "application/json"]);
  });
});
