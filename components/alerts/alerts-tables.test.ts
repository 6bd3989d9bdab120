import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { AlertStates, DeliveryLog } from "./delivery-log";
import { RulesTable, type RuleRow } from "./rules-table";

const HOSTILE = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;

const rule: RuleRow = {
  id: "6f1c2d9e-8a4b-4c1d-9e2f-0a1b2c3d4e5f",
  name: `Orders ${HOSTILE}`,
  kind: "depth_above",
  params: { depth: 5 },
  condition: "depth above 5",
  connectionId: null,
  queuePattern: HOSTILE,
  ownerTeam: null,
  scope: `DLQs ${HOSTILE}`,
  webhookOrigin: "https://hooks.example.com",
  enabled: true,
  createdBy: "admin@example.test",
  createdAt: "2026-12-02T12:00:00.000Z",
  updatedAt: "2026-12-02T12:00:00.000Z",
  firing: 2,
  lastDelivery: null,
};

describe("alert tables", () => {
  it("show hostile rule and DLQ names as text, never markup", () => {
    const html = [
      renderToStaticMarkup(createElement(RulesTable, { rules: [rule] })),
      renderToStaticMarkup(
        createElement(DeliveryLog, {
          deliveries: [
            {
              id: "1",
              connectionId: "c",
              queue: HOSTILE,
              event: "fire",
              state: "pending",
              attempts: 2,
              statusCode: 500,
              errorClass: "HTTP 5xx",
              errorDetail: `receiver said ${HOSTILE}`,
              createdAt: rule.createdAt,
              nextAttemptAt: rule.createdAt,
              deliveredAt: null,
            },
          ],
        }),
      ),
      renderToStaticMarkup(
        createElement(AlertStates, {
          states: [
            {
              connectionId: "c",
              queue: HOSTILE,
              state: "firing",
              since: rule.createdAt,
              value: `critical finding on ${HOSTILE}`,
            },
          ],
        }),
      ),
    ].join("\n");
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<script");
    expect(html).toContain("&lt;img src=x onerror=");
    expect(html).toContain("firing for 2 DLQs");
    expect(html).toContain("retrying (2 failed)");
    // The DLQ link carries the name percent-encoded in its path.
    expect(html).toContain(`href="/dlqs/c/${encodeURIComponent(HOSTILE)}"`);
  });

  it("show a failure's class, and its words only when the view carries them (admins)", () => {
    const delivery = {
      id: "2",
      connectionId: "c",
      queue: "orders.dlq",
      event: "fire",
      state: "failed",
      attempts: 6,
      statusCode: null,
      errorClass: "TLS: certificate name mismatch" as const,
      createdAt: rule.createdAt,
      nextAttemptAt: null,
      deliveredAt: null,
    };
    const detail = "No answer from hooks.example.com: ERR_TLS_CERT_ALTNAME_INVALID, ... DNS:internal.corp";
    const forViewer = renderToStaticMarkup(
      createElement(DeliveryLog, { deliveries: [{ ...delivery, errorDetail: null }] }),
    );
    expect(forViewer).toContain("TLS: certificate name mismatch");
    expect(forViewer).not.toContain("alert-delivery-error-detail");
    const forAdmin = renderToStaticMarkup(
      createElement(DeliveryLog, { deliveries: [{ ...delivery, errorDetail: detail }] }),
    );
    expect(forAdmin).toContain("TLS: certificate name mismatch");
    expect(forAdmin).toContain("DNS:internal.corp");
  });
});
