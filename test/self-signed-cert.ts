// A self-signed TLS certificate made with node:crypto alone (no openssl, no fixture that expires):
// a P-256 key and a minimal X.509 v3 certificate, DER-encoded by hand, valid from an hour ago for a
// day, naming `dnsName` in its subjectAltName. For tests of TLS clients (lib/alerts/send.ts).
import { generateKeyPairSync, randomBytes, sign, X509Certificate } from "node:crypto";

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, body: Buffer) => Buffer.concat([Buffer.from([tag]), length(body.length), body]);
const seq = (...parts: Buffer[]) => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => tlv(0x31, Buffer.concat(parts));
const explicit = (n: number, body: Buffer) => tlv(0xa0 + n, body);
const octets = (body: Buffer) => tlv(0x04, body);
const bits = (body: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), body]));
const integer = (body: Buffer) => tlv(0x02, body[0] & 0x80 ? Buffer.concat([Buffer.from([0]), body]) : body);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out = [40 * a + b];
  for (const v of rest) {
    const chunk = [v & 0x7f];
    for (let x = v >> 7; x > 0; x >>= 7) chunk.unshift((x & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

const name = (cn: string) => seq(set(seq(oid("2.5.4.3"), tlv(0x0c, Buffer.from(cn)))));
const ECDSA_SHA256 = seq(oid("1.2.840.10045.4.3.2"));

/** A certificate for `dnsName`, signed by its own key: untrusted unless a test adds it to the trusted CAs. */
export function selfSignedCert(dnsName: string, now = new Date()): { cert: string; key: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const serial = randomBytes(12);
  serial[0] &= 0x7f;
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_SHA256,
    name(dnsName),
    seq(time(new Date(now.getTime() - 3600_000)), time(new Date(now.getTime() + 86_400_000))),
    name(dnsName),
    publicKey.export({ type: "spki", format: "der" }),
    explicit(
      3,
      seq(
        // subjectAltName: one dNSName ([2] IMPLICIT IA5String).
        seq(oid("2.5.29.17"), octets(seq(tlv(0x82, Buffer.from(dnsName))))),
        // basicConstraints CA:TRUE (critical), so the certificate may stand as its own trust anchor.
        seq(oid("2.5.29.19"), tlv(0x01, Buffer.from([0xff])), octets(seq(tlv(0x01, Buffer.from([0xff]))))),
      ),
    ),
  );
  const der = seq(tbs, ECDSA_SHA256, bits(sign("sha256", tbs, privateKey)));
  const body = der.toString("base64").replace(/.{64}/g, "$&\n");
  const cert = `-----BEGIN CERTIFICATE-----\n${body.trimEnd()}\n-----END CERTIFICATE-----\n`;
  new X509Certificate(cert); // throws if the encoding above is wrong
  return { cert, key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
}
