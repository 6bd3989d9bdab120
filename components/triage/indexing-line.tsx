import { RelativeTime } from "@/components/ui/relative-time";
import type { IndexingLine as Line } from "@/lib/triage/indexing-policy";

/** One line under the scan panel: whether the console keeps this DLQ's groups current on its own. */
export function IndexingLine({ line }: { line: Line }) {
  return (
    <p className="hint" data-testid="indexing-line" data-kind={line.kind}>
      {line.text}
      {line.at ? (
        <>
          {" "}
          <RelativeTime value={line.at} />
        </>
      ) : null}
    </p>
  );
}
