/**
 * The benches' bare bulk writer: rows as COPY's text format, sent with `COPY … FROM STDIN`. It is
 * the floor of what writing rows costs Postgres (and a writer's Node), against which a bench sets
 * the console's own writes (triage-scan's index rows, redrive-rate's ledger and audit rows).
 */
const COPY_SPECIAL = /[\\\t\n\r]/g;
const copyEscape = (c: string) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r");

/**
 * `COPY … FROM STDIN` (text format) of `data` on `client`: pg has no COPY of its own, and the bench
 * needs no stream; this is the protocol's copy-in, as pg-copy-streams sends it, for one chunk.
 */
export function copyIn(client: import("pg").Client, text: string, data: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let failed: unknown = null;
    let submitted = false;
    type Conn = { query(t: string): void; sendCopyFromChunk(b: Buffer): void; endCopyFrom(): void };
    const noop = () => undefined;
    client.query({
      submit(connection: Conn) {
        submitted = true;
        connection.query(text);
      },
      handleCopyInResponse(connection: Conn) {
        connection.sendCopyFromChunk(Buffer.from(data, "utf8"));
        connection.endCopyFrom();
      },
      handleError(e: unknown) {
        failed = e;
        if (!submitted) reject(e);
      },
      handleReadyForQuery() {
        if (failed) reject(failed);
        else resolve();
      },
      handleCommandComplete: noop,
      handleRowDescription: noop,
      handleDataRow: noop,
      handlePortalSuspended: noop,
      handleEmptyQuery: noop,
      handleCopyData: noop,
    } as never);
  });
}

/** Rows of text values (null: SQL NULL) as COPY's text format, one line each. */
export function copyLines(rows: ReadonlyArray<ReadonlyArray<string | null>>): string {
  let data = "";
  for (const row of rows)
    data += `${row.map((v) => (v === null ? "\\N" : v.replace(COPY_SPECIAL, copyEscape))).join("\t")}\n`;
  return data;
}
