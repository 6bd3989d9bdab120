import { describe, expect, it } from "vitest";
import { SAFE_COPY_ARG, safeCopiesOf } from "@/lib/brokers/rabbitmq/discovery";
import { safeMovePermissions } from "@/lib/brokers/rabbitmq/safe-move";

describe("move to safety: pure parts", () => {
  it("names the permissions in RabbitMQ's words, with regexes that match only these queues", () => {
    const p = safeMovePermissions({ vhost: "/", management: true, discovery: false }, "orders.dlq", "orders.dlq.safe");
    expect(p[0]).toMatch(/^configure on queue "orders\.dlq\.safe" in vhost "\/" \(e\.g\. \^orders\\\.dlq\\\.safe\$\)/);
    expect(p[1]).toMatch(/^write on exchange "amq\.default"/);
    expect(p[2]).toMatch(/^read on queue "orders\.dlq" in vhost "\/" \(e\.g\. \^orders\\\.dlq\$\)/);
    expect(p[3]).toMatch(/"management" user tag.*GET \/api\/queues:/);
    expect(safeMovePermissions({ vhost: "v", management: false, discovery: false }, "a", "a.safe")).toHaveLength(3);
  });

  it("knows the queues the console declared as safe copies by their argument", () => {
    const m = safeCopiesOf([
      { name: "a.dlq.safe", vhost: "/", arguments: { [SAFE_COPY_ARG]: "a.dlq", "x-queue-type": "classic" } },
      { name: "b.dlq.safe", vhost: "/", arguments: {} },
      { name: "self", vhost: "/", arguments: { [SAFE_COPY_ARG]: "self" } },
    ]);
    expect([...m]).toEqual([["a.dlq.safe", "a.dlq"]]);
  });
});
