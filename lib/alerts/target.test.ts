import { describe, expect, it } from "vitest";
import { isAppError } from "@/lib/errors";
import {
  checkWebhookTarget,
  classifyAddress,
  databaseEndpoints,
  isAllowListed,
  targetOrigin,
  type Lookup,
  type TargetPolicy,
} from "./target";

const PUBLIC_V4 = "93.184.215.14";
const PUBLIC_V6 = "2606:4700:4700::1111";

function policy(p: Partial<TargetPolicy> & { names?: Record<string, string[]> } = {}): TargetPolicy {
  const names = p.names ?? {};
  const lookup: Lookup = async (host) => {
    const a = names[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return a.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { allowedHosts: p.allowedHosts ?? [], databases: p.databases ?? [], lookup: p.lookup ?? lookup };
}

async function refusal(url: string, pol: TargetPolicy): Promise<{ code: string; message: string }> {
  try {
    await checkWebhookTarget(url, pol);
  } catch (e) {
    if (isAppError(e)) return { code: e.code, message: e.userMessage };
    throw e;
  }
  throw new Error(`${url} was accepted`);
}

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["169.254.169.254", "metadata"],
    ["::ffff:169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["169.254.10.1", "link-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["fd12:3456::1", "private"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["192.0.2.10", "reserved"],
    ["2001:db8::1", "reserved"],
    ["2002:7f00:1::", "reserved"],
    ["64:ff9b::7f00:1", "reserved"],
    ["not an address", "reserved"],
    [PUBLIC_V4, "public"],
    ["172.32.0.1", "public"],
    [PUBLIC_V6, "public"],
  ])("%s is %s", (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });
});

describe("checkWebhookTarget", () => {
  it("accepts https to a public address and keeps the vetted addresses for the send", async () => {
    const t = await checkWebhookTarget(
      "https://hooks.example.com/services/T000/B000/secret",
      policy({ names: { "hooks.example.com": [PUBLIC_V4, PUBLIC_V6] } }),
    );
    expect(t.addresses.map((a) => a.address)).toEqual([PUBLIC_V4, PUBLIC_V6]);
    expect(t.port).toBe(443);
    expect(t.allowListed).toBe(false);
    await expect(checkWebhookTarget(`https://${PUBLIC_V4}/hook`, policy())).resolves.toMatchObject({
      hostname: PUBLIC_V4,
    });
    await expect(checkWebhookTarget(`https://[${PUBLIC_V6}]:8443/hook`, policy())).resolves.toMatchObject({
      hostname: PUBLIC_V6,
      port: 8443,
    });
  });

  it("refuses loopback, private and reserved literal addresses unless the host is allow-listed", async () => {
    for (const host of ["127.0.0.1", "[::1]", "10.0.0.5", "192.168.1.20", "[fd12::1]", "192.0.2.1"]) {
      const r = await refusal(`https://${host}/hook`, policy());
      expect(r.code, host).toBe("bad_request:webhook");
      expect(r.message, host).toMatch(
        /address\. Webhooks go to public hosts unless an admin lists the host in operations\.webhookAllowedHosts/,
      );
    }
    await expect(
      checkWebhookTarget("http://127.0.0.1:9999/hook", policy({ allowedHosts: ["127.0.0.1"] })),
    ).resolves.toMatchObject({ allowListed: true });
    await expect(
      checkWebhookTarget("http://10.0.0.5:8080/hook", policy({ allowedHosts: ["10.0.0.5:8080"] })),
    ).resolves.toMatchObject({ allowListed: true });
    // host:port entries allow that port only.
    expect((await refusal("http://10.0.0.5:8081/hook", policy({ allowedHosts: ["10.0.0.5:8080"] }))).message).toMatch(
      /must use https/,
    );
  });

  it("understands the address forms URLs normalise (decimal, hex, short IPv4)", async () => {
    for (const url of ["https://2130706433/", "https://0x7f.1/", "https://127.1/", "https://[::ffff:127.0.0.1]/"]) {
      expect((await refusal(url, policy())).message, url).toMatch(/loopback address/);
    }
  });

  it("never allows metadata, link-local or unspecified addresses, even for an allow-listed host", async () => {
    const allowAll = {
      allowedHosts: [
        "169.254.169.254",
        "[fd00:ec2::254]",
        "169.254.1.1",
        "0.0.0.0",
        "metadata.google.internal",
        "meta.internal",
      ],
    };
    expect((await refusal("http://169.254.169.254/latest/meta-data", policy(allowAll))).message).toBe(
      "169.254.169.254 is a cloud metadata address, never a webhook target.",
    );
    expect((await refusal("http://[fd00:ec2::254]/", policy(allowAll))).message).toMatch(/cloud metadata address/);
    expect((await refusal("http://169.254.1.1/", policy(allowAll))).message).toMatch(/link-local address, never/);
    expect((await refusal("http://0.0.0.0/", policy(allowAll))).message).toMatch(/unspecified address, never/);
    expect((await refusal("http://metadata.google.internal/computeMetadata/v1/", policy(allowAll))).message).toMatch(
      /cloud metadata service/,
    );
    // Without an allow-list entry too, the reason is the one no entry could change (not "must use https").
    expect((await refusal("http://169.254.169.254/latest/meta-data", policy())).message).toBe(
      "169.254.169.254 is a cloud metadata address, never a webhook target.",
    );
    expect((await refusal("http://metadata.google.internal/", policy())).message).toMatch(/cloud metadata service/);
    // A name that resolves to the metadata address.
    const r = await refusal(
      "http://meta.internal/",
      policy({ ...allowAll, names: { "meta.internal": ["169.254.169.254"] } }),
    );
    expect(r.message).toBe("meta.internal (169.254.169.254) is a cloud metadata address, never a webhook target.");
  });

  it("checks every address a name resolves to", async () => {
    const pol = policy({ names: { "mixed.example.com": [PUBLIC_V4, "10.0.0.7"] } });
    expect((await refusal("https://mixed.example.com/hook", pol)).message).toMatch(
      /^mixed\.example\.com \(10\.0\.0\.7\) is a private address/,
    );
  });

  it("says when a name does not resolve (unavailable, so a send retries)", async () => {
    const r = await refusal("https://nowhere.example.com/hook", policy());
    expect(r.code).toBe("unavailable:webhook");
    expect(r.message).toBe("The webhook host nowhere.example.com could not be resolved (ENOTFOUND).");
  });

  it("refuses credentials in the URL, other schemes and plain http to hosts not allow-listed", async () => {
    expect((await refusal(`https://user:pass@${PUBLIC_V4}/hook`, policy())).message).toMatch(
      /must not hold a user name or password/,
    );
    expect((await refusal(`https://token@${PUBLIC_V4}/hook`, policy({ allowedHosts: [PUBLIC_V4] }))).message).toMatch(
      /must not hold a user name/,
    );
    expect((await refusal(`http://${PUBLIC_V4}/hook`, policy())).message).toMatch(/must use https/);
    expect((await refusal("ftp://example.com/x", policy())).message).toMatch(/must start with https/);
    expect((await refusal("javascript:alert(1)", policy())).message).toMatch(/must start with https/);
    expect((await refusal("not a url", policy())).message).toBe("The webhook URL is not a valid URL.");
  });

  it("never targets the console's own database, even on an allow-listed host", async () => {
    const databases = databaseEndpoints({
      DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/dlq",
      DATABASE_OWNER_URL: "postgresql://owner@db.internal/dlq",
    });
    expect(databases).toEqual([
      { host: "127.0.0.1", port: 5432 },
      { host: "db.internal", port: 5432 },
    ]);
    const pol = policy({
      allowedHosts: ["127.0.0.1", "localhost", "relay.internal"],
      databases,
      names: { localhost: ["127.0.0.1", "::1"], "relay.internal": ["10.9.9.9"], "db.internal": ["10.9.9.9"] },
    });
    expect((await refusal("http://127.0.0.1:5432/", pol)).message).toBe(
      "127.0.0.1:5432 is the console's own database, never a webhook target.",
    );
    expect((await refusal("http://localhost:5432/", pol)).message).toMatch(/console's own database/);
    expect((await refusal("http://relay.internal:5432/", pol)).message).toMatch(/console's own database/);
    await expect(checkWebhookTarget("http://127.0.0.1:8080/", pol)).resolves.toBeDefined();
    expect(databaseEndpoints({})).toEqual([]);
  });

  it("matches allow-list entries by host, case and trailing dot aside, and by host:port", () => {
    expect(isAllowListed(["Relay.Internal"], "relay.internal.", 443)).toBe(true);
    expect(isAllowListed(["relay.internal:8443"], "relay.internal", 443)).toBe(false);
    expect(isAllowListed(["[::1]:8080"], "::1", 8080)).toBe(true);
    expect(isAllowListed(["::1"], "::1", 1)).toBe(true);
    expect(isAllowListed(["relay.internal"], "evil-relay.internal", 443)).toBe(false);
  });

  it("shows only a URL's origin (its path may hold a token)", () => {
    expect(targetOrigin("https://hooks.slack.com/services/T000/B000/XXXXXXXX")).toBe("https://hooks.slack.com");
    expect(targetOrigin("http://127.0.0.1:9000/x?token=1")).toBe("http://127.0.0.1:9000");
    expect(targetOrigin("nonsense")).toBe("(invalid URL)");
  });
});
