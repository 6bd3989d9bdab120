import { describe, expect, it } from "vitest";
import { decodeDescribeConfigsResponse, encodeDescribeGroupConfigs } from "@/lib/brokers/kafka/group-configs";

const cs = (s: string | null) => (s === null ? [0] : [Buffer.byteLength(s) + 1, ...Buffer.from(s)]);

describe("DescribeConfigs v4 for GROUP resources (raw)", () => {
  it("encodes one group resource asking one key", () => {
    expect([...encodeDescribeGroupConfigs(["billing"], ["errors.deadletterqueue.topic.name"])]).toEqual([
      0, // header tags
      2, // one resource
      32,
      ...cs("billing"),
      2,
      ...cs("errors.deadletterqueue.topic.name"),
      0, // resource tags
      0,
      0, // include_synonyms, include_documentation
      0,
    ]);
  });

  it("decodes results: the value per config, the error per group", () => {
    const config = (name: string, value: string | null) => [...cs(name), ...cs(value), 0, 5, 0, 1, 4, 0, 0];
    const payload = Buffer.from([
      0, // response header tags
      0,
      0,
      0,
      0, // throttle
      3, // two results
      0,
      0,
      0,
      32,
      ...cs("billing"),
      2,
      ...config("errors.deadletterqueue.topic.name", "dlq.orders"),
      0,
      0,
      69,
      ...cs("Group not found"),
      32,
      ...cs("ghost"),
      1,
      0,
      0,
    ]);
    const [a, b] = decodeDescribeConfigsResponse(payload);
    expect(a).toMatchObject({ group: "billing", errorCode: 0, errorMessage: null });
    expect(a.configs.get("errors.deadletterqueue.topic.name")).toBe("dlq.orders");
    expect(b).toMatchObject({ group: "ghost", errorCode: 69, errorMessage: "Group not found" });
  });
});
