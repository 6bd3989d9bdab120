import "server-only";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { CheckedTarget } from "./target";

export const SEND_TIMEOUT_MS = 5_000;
/** Enough of a receiver's answer to explain a refusal ("invalid_payload", "no_service"). */
const MAX_ANSWER_CHARS = 300;

export interface SendResult {
  statusCode: number;
  /** The start of the receiver's answer, control characters removed. */
  answer: string;
}

/**
 * One POST of a JSON body to a checked target. The socket connects to the address the check
 * vetted (a `lookup` that answers only that address, so the name is not resolved again: no DNS
 * rebinding between the check and the send); TLS still verifies the certificate against the host
 * name. Redirects are not followed (node:http never does); the whole exchange has `timeoutMs`.
 * Throws on a network error or the timeout; any HTTP status is a result.
 */
export function postJson(target: CheckedTarget, body: string, timeoutMs = SEND_TIMEOUT_MS): Promise<SendResult> {
  const vetted = target.addresses[0];
  const lookup: LookupFunction = (_hostname, options, callback) => {
    const cb = callback as (
      err: NodeJS.ErrnoException | null,
      address: string | Array<{ address: string; family: number }>,
      family?: number,
    ) => void;
    if (options && (options as { all?: boolean }).all) cb(null, [{ address: vetted.address, family: vetted.family }]);
    else cb(null, vetted.address, vetted.family);
  };
  const client = target.url.protocol === "https:" ? https : http;
  return new Promise<SendResult>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const req = client.request(
      target.url,
      {
        method: "POST",
        lookup,
        agent: false,
        headers: {
          "content-type": "application/json; charset=utf-8",
          "content-length": Buffer.byteLength(body),
          "user-agent": "dlq-console-alerts",
        },
      },
      (res) => {
        let answer = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (answer.length < MAX_ANSWER_CHARS) answer += chunk;
        });
        const done = () =>
          finish(() =>
            resolve({
              statusCode: res.statusCode ?? 0,
              answer: answer
                .replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ")
                .trim()
                .slice(0, MAX_ANSWER_CHARS),
            }),
          );
        res.on("end", done);
        res.on("error", (e) => finish(() => reject(e)));
        res.on("close", done);
      },
    );
    const timer = setTimeout(() => {
      finish(() => reject(Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: "ETIMEDOUT" })));
      req.destroy();
    }, timeoutMs);
    req.on("error", (e) => finish(() => reject(e)));
    req.end(body);
  });
}
