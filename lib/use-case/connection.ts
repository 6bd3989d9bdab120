import "server-only";
import { getAdapter } from "@/lib/connections/registry";
import { capabilitiesOf, type BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { BrokerKind, BrokerVocabulary, ConnectionCapabilities } from "@/lib/brokers/contract/capabilities";
import { AppError } from "@/lib/errors";

/** What the UI knows about a connection; never its URL or credentials. */
export interface ConnectionInfo {
  connectionId: string;
  displayName: string;
  kind: BrokerKind;
  capabilities: ConnectionCapabilities;
  vocabulary: BrokerVocabulary;
}

export function connectionInfo(a: BrokerAdapter): ConnectionInfo {
  return {
    connectionId: a.connectionId,
    displayName: a.displayName,
    kind: a.kind,
    capabilities: capabilitiesOf(a),
    vocabulary: a.vocabulary,
  };
}

/** The adapter for a connection id the client sent; unknown ids are `not_found:connection`. */
export function adapterFor(connectionId: string): BrokerAdapter {
  try {
    return getAdapter(connectionId);
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw new AppError("not_found:connection", {
      message: String(e),
      userMessage: `There is no connection "${connectionId}".`,
    });
  }
}

/** Fails a broker call that hangs, so a page always renders. */
export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new AppError("unavailable:broker", {
            message: `${what} timed out after ${ms} ms`,
            userMessage: `The broker did not answer within ${Math.round(ms / 1000)} s.`,
          }),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
