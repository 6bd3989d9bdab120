import { describe, expect, it } from "vitest";
import { buildAlertMessage, dlqLink, groupLink, slackText } from "./message";

const AT = new Date("2026-12-02T12:00:00Z");

describe("alert messages", () => {
  it("names the DLQ, connection, owner, value and links back to the DLQ's page", () => {
    const m = buildAlertMessage({
      event: "fire",
      rule: { name: "Orders backlog", condition: "depth above 100" },
      dlq: { connectionId: "prod-rabbit", queue: "orders.dlq" },
      owner: { team: "payments", contact: "#payments-oncall" },
      value: "depth 250",
      link: "https://dlq.example.com/dlqs/prod-rabbit/orders.dlq",
      at: AT,
    });
    expect(m.text).toBe(
      [
        ':rotating_light: Firing: orders.dlq on prod-rabbit: depth above 100 (rule "Orders backlog")',
        "Seen: depth 250",
        "Owner: payments (#payments-oncall)",
        "<https://dlq.example.com/dlqs/prod-rabbit/orders.dlq|Open the DLQ in DLQ Console>",
      ].join("\n"),
    );
    const json = JSON.stringify(m.blocks);
    for (const part of ["orders.dlq", "prod-rabbit", "payments", "depth 250", "2026-12-02 12:00:00 UTC"])
      expect(json).toContain(part);
  });

  it("says resolved with the value now, and 'none set' without an owner", () => {
    const m = buildAlertMessage({
      event: "resolve",
      rule: { name: "r", condition: "depth above 100" },
      dlq: { connectionId: "c", queue: "q" },
      owner: null,
      value: "depth 3",
      link: "/dlqs/c/q",
      at: AT,
    });
    expect(m.text.split("\n")).toEqual([
      ':white_check_mark: Resolved: q on c: depth above 100 (rule "r")',
      "Now: depth 3",
      "Owner: none set",
      "Open the DLQ in DLQ Console: /dlqs/c/q (on the console)",
    ]);
  });

  it("keeps hostile names as data: no mentions, links or extra lines in Slack markup", () => {
    const queue = "<!channel> <https://evil.example|click me> & co\n:rotating_light: Firing: fake";
    const m = buildAlertMessage({
      event: "fire",
      rule: { name: "<@U123>", condition: "depth above 1" },
      dlq: { connectionId: "c", queue },
      owner: { team: "<!here>", contact: "x" },
      value: "depth 2",
      link: dlqLink("c", queue, "https://dlq.example.com"),
      at: AT,
    });
    const lines = m.text.split("\n");
    expect(lines[0]).toBe(
      ':rotating_light: Firing: &lt;!channel&gt; &lt;https://evil.example|click me&gt; &amp; co :rotating_light: Firing: fake on c: depth above 1 (rule "&lt;@U123&gt;")',
    );
    expect(lines).toHaveLength(4);
    // The only raw "<" opens our own link, whose URL has the name percent-encoded.
    expect(m.text.match(/</g)).toHaveLength(1);
    expect(lines[3]).toMatch(
      /^<https:\/\/dlq\.example\.com\/dlqs\/c\/%3C!channel%3E%20%3Chttps%3A%2F%2Fevil\.example%7Cclick%20me%3E%20%26%20co%0A/,
    );
    const json = JSON.stringify(m);
    expect(json).not.toContain("<!channel>");
    expect(json).not.toContain("<!here>");
    expect(JSON.parse(json)).toEqual(m);
  });

  it("bounds long names", () => {
    expect(Array.from(slackText("x".repeat(1000))).length).toBe(300);
  });

  it("builds the DLQ link from the console's URL, relative without one", () => {
    expect(dlqLink("local-rabbitmq", "a/b c", "https://dlq.example.com/some/path")).toBe(
      "https://dlq.example.com/dlqs/local-rabbitmq/a%2Fb%20c",
    );
    expect(dlqLink("local-rabbitmq", "q", undefined)).toBe("/dlqs/local-rabbitmq/q");
    expect(dlqLink("local-rabbitmq", "q", "not a url")).toBe("/dlqs/local-rabbitmq/q");
  });

  it("names a failure group's exception and message, as data, and links to the group", () => {
    const m = buildAlertMessage({
      event: "fire",
      rule: { name: "New failures", condition: "a new failure group" },
      dlq: { connectionId: "prod-rabbit", queue: "orders.dlq" },
      owner: null,
      group: {
        title: "LoginFailed: refused <!channel> password=[hidden]",
        exceptionClass: "com.acme.LoginFailed",
        message: "refused <!channel> password=[hidden]",
      },
      value: "first seen: 2 letters",
      link: groupLink("prod-rabbit", "orders.dlq", "abc123", "https://dlq.example.com"),
      at: AT,
    });
    expect(m.text.split("\n")).toEqual([
      ':rotating_light: Firing: orders.dlq on prod-rabbit: a new failure group (rule "New failures")',
      "Group: LoginFailed: refused &lt;!channel&gt; password=[hidden]",
      "Exception: com.acme.LoginFailed",
      "Message: refused &lt;!channel&gt; password=[hidden]",
      "Seen: first seen: 2 letters",
      "Owner: none set",
      "<https://dlq.example.com/failures/prod-rabbit/orders.dlq/abc123|Open the group in DLQ Console>",
    ]);
    expect(m.blocks[1]).toEqual({
      type: "section",
      text: {
        type: "mrkdwn",
        text: "*Group*\nLoginFailed: refused &lt;!channel&gt; password=[hidden]\n*Exception*\ncom.acme.LoginFailed\n*Message*\nrefused &lt;!channel&gt; password=[hidden]",
      },
    });
  });

  it("a test message names the rule and needs no DLQ", () => {
    const m = buildAlertMessage({
      event: "test",
      rule: { name: "Orders", condition: "depth above 5, every DLQ" },
      dlq: null,
      owner: null,
      value: null,
      link: null,
      at: AT,
    });
    expect(m.text).toBe(
      ':test_tube: Test message from DLQ Console for rule "Orders" (depth above 5, every DLQ). Alerts of this rule will arrive here.',
    );
  });
});
