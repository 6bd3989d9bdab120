import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryLog } from "@/components/alerts/delivery-log";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { resetConfigCache } from "@/lib/config";
import { getDb } from "@/lib/db";
import { selfSignedCert } from "@/test/self-signed-cert";
import { deliverAlerts } from "./deliver";
import { defaultPolicy, type TargetPolicy } from "./target";
import { createAlertRule, listAlertRules, viewAlertRule } from "./use-cases";

/**
 * A webhook delivery failing on a real TLS handshake, on the real Postgres: an HTTPS receiver on
 * 127.0.0.1 with a certificate made for another name. Its error names that certificate's host
 * names; every role reads the class of the failure, and only admins its words.
 */
const RUN = `tls-${randomUUID().slice(0, 8)}`;
const CERT_NAME = `elsewhere-${RUN}.internal`;
const dir = mkdtempSync(path.join(tmpdir(), "dlq-alert-tls-"));
const { cert, key } = selfSignedCert(CERT_NAME);
const receiver = https.createServer({ cert, key }, (_req, res) => res.end("ok"));
let port = 0;
const defaultCAs = tls.getCACertificates("default");

const meta = (): RequestMeta => ({ requestId: `alert-tls-${randomUUID()}`, ip: "127.0.0.1" });
const actors: Record<"admin" | "operator" | "viewer", Actor> = {} as never;

/** The console's policy, but "localhost" always answers 127.0.0.1 (where the receiver listens), whatever /etc/hosts says. */
const policy = (): TargetPolicy => ({ ...defaultPolicy(), lookup: async () => [{ address: "127.0.0.1", family: 4 }] });

beforeAll(async () => {
  const configFile = path.join(dir, "config.json");
  writeFileSync(
    configFile,
    JSON.stringify({
      connections: [{ kind: "rabbitmq", id: "alert-tls", url: "amqp://127.0.0.1:5672", discover: false }],
      operations: { webhookAllowedHosts: ["localhost"] },
    }),
  );
  process.env.DLQ_CONSOLE_CONFIG = configFile;
  resetConfigCache();
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  port = (receiver.address() as AddressInfo).port;
  for (const role of ["admin", "operator", "viewer"] as const) {
    const u = await createUser({ email: `${role}-${RUN}@alerts.test`, role, password: "a-password-long-enough" });
    actors[role] = { id: u.id, email: u.email, name: null, role };
  }
});

afterAll(async () => {
  tls.setDefaultCACertificates(defaultCAs);
  await getDb().alertRule.deleteMany({ where: { name: { startsWith: RUN } } });
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
  rmSync(dir, { recursive: true, force: true });
  delete process.env.DLQ_CONSOLE_CONFIG;
  resetConfigCache();
});

/** A rule posting to the receiver, one message queued for it, and a delivery round. */
async function failedDelivery(name: string) {
  const r = await createAlertRule(actors.admin, meta(), {
    name: `${RUN} ${name}`,
    kind: "depth_above",
    params: { depth: 5 },
    webhookUrl: `https://localhost:${port}/hook/${name}`,
  });
  await getDb().alertDelivery.create({
    data: { ruleId: r.id, connectionId: "c", queue: `${RUN}.${name}.dlq`, event: "fire", payload: { text: "x" } },
  });
  await deliverAlerts({ policy: policy() });
  const [row] = await getDb().alertDelivery.findMany({ where: { ruleId: r.id } });
  expect(row).toMatchObject({ state: "pending", attempts: 1, statusCode: null });
  return r.id;
}

describe("a delivery's TLS failure", () => {
  it("shows the class to every role, the peer certificate's names to admins only", async () => {
    const untrusted = await failedDelivery("untrusted");
    // Trusted, but made for another name: the check of the name fails, and its error names the certificate's.
    tls.setDefaultCACertificates([...defaultCAs, cert]);
    const mismatch = await failedDelivery("mismatch");
    tls.setDefaultCACertificates(defaultCAs);

    for (const role of ["viewer", "operator"] as const) {
      const view = await viewAlertRule(actors[role], meta(), { id: mismatch });
      expect(view.deliveries).toEqual([
        expect.objectContaining({ state: "pending", errorClass: "TLS: certificate name mismatch", errorDetail: null }),
      ]);
      const other = await viewAlertRule(actors[role], meta(), { id: untrusted });
      expect(other.deliveries).toEqual([
        expect.objectContaining({ errorClass: "TLS: untrusted certificate", errorDetail: null }),
      ]);
      const list = (await listAlertRules(actors[role], meta())).filter((x) => x.name.startsWith(RUN));
      expect(list.map((x) => [x.name, x.lastDelivery?.errorClass, x.lastDelivery?.errorDetail])).toEqual([
        [`${RUN} mismatch`, "TLS: certificate name mismatch", null],
        [`${RUN} untrusted`, "TLS: untrusted certificate", null],
      ]);
      // Nothing of the error's words in what the pages get, nor in what they render.
      const html = renderToStaticMarkup(createElement(DeliveryLog, { deliveries: view.deliveries }));
      for (const text of [JSON.stringify(view), JSON.stringify(other), JSON.stringify(list), html]) {
        expect(text).not.toContain(CERT_NAME);
        expect(text).not.toMatch(/ERR_TLS|altnames|self-signed|DEPTH_ZERO/);
      }
      expect(html).toContain("TLS: certificate name mismatch");
    }

    const forAdmin = await viewAlertRule(actors.admin, meta(), { id: mismatch });
    expect(forAdmin.deliveries[0].errorClass).toBe("TLS: certificate name mismatch");
    expect(forAdmin.deliveries[0].errorDetail).toMatch(
      new RegExp(
        `^No answer from localhost:${port}: ERR_TLS_CERT_ALTNAME_INVALID, .*DNS:${CERT_NAME.replace(/\./g, "\\.")}`,
      ),
    );
    expect(renderToStaticMarkup(createElement(DeliveryLog, { deliveries: forAdmin.deliveries }))).toContain(
      `DNS:${CERT_NAME}`,
    );
    expect((await viewAlertRule(actors.admin, meta(), { id: untrusted })).deliveries[0].errorDetail).toMatch(
      /DEPTH_ZERO_SELF_SIGNED_CERT/,
    );
  });
});
