import "server-only";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { SqsConnectionConfig } from "@/lib/config";
import { secretFromEnv } from "@/lib/config";

export interface SqsClientOptions {
  /** Attempts per request, first one included. Kept small so a dead endpoint fails in seconds. */
  maxAttempts?: number;
  connectTimeoutMs?: number;
  /** Per request; must exceed the longest WaitTimeSeconds the adapter uses. */
  requestTimeoutMs?: number;
}

const LOOPBACK = /^https?:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?(\/|$)/i;

/** True for an emulator on this machine: the only case where placeholder keys are acceptable. */
export function isLoopbackEndpoint(endpoint: string | undefined): boolean {
  return endpoint !== undefined && LOOPBACK.test(endpoint);
}

/**
 * Static keys when the config names env vars that hold them (emulators; "test" when they are
 * unset and the endpoint is on loopback), else undefined: the SDK's default provider chain (env,
 * shared profile, SSO, instance or task role). Keys never come from the config file itself.
 */
export function credentialsFor(c: SqsConnectionConfig): { accessKeyId: string; secretAccessKey: string } | undefined {
  if (!c.accessKeyIdEnv && !c.secretAccessKeyEnv) return undefined;
  const fallback = isLoopbackEndpoint(c.endpoint) ? "test" : undefined;
  const accessKeyId = secretFromEnv(c.accessKeyIdEnv, fallback);
  const secretAccessKey = secretFromEnv(c.secretAccessKeyEnv, fallback);
  return accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined;
}

export function createSqsClient(c: SqsConnectionConfig, o: SqsClientOptions = {}): SQSClient {
  return new SQSClient({
    region: c.region,
    endpoint: c.endpoint,
    credentials: credentialsFor(c),
    maxAttempts: o.maxAttempts ?? 2,
    // The adapter verifies MD5OfBody itself: a mismatch is a warning on the letter, not a failed read.
    md5: false,
    requestHandler: { connectionTimeout: o.connectTimeoutMs ?? 3000, requestTimeout: o.requestTimeoutMs ?? 30_000 },
  });
}
