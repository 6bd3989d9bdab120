import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { DlqCrumbTrail, DlqHead } from "@/components/dlq/dlq-head";
import { DlqCharts } from "@/components/operations/dlq-charts";
import { DlqFigures } from "@/components/operations/dlq-figures";
import { FindingsTable } from "@/components/operations/findings-table";
import { Problem } from "@/components/ui/problem";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { connectionName } from "@/lib/dlq/describe-dlq";
import { decodeParam } from "@/lib/dlq/links";
import { CHART_RANGE_NAMES, findingsHref, healthHref, parseRange } from "@/lib/operations/ui-links";
import { operationsDisplaySettings } from "@/lib/operations/ui-settings";
import { listFindings, viewDlqOperations } from "@/lib/operations/use-cases";
import { loadOrProblem } from "@/lib/use-case/app-error";

export const dynamic = "force-dynamic";

type Params = { connectionId: string; queue: string };
type Search = Record<string, string | string[] | undefined>;

export async function generateMetadata({ params }: { params: Promise<Params> }): Promise<Metadata> {
  return { title: `Health · ${decodeParam((await params).queue)}` };
}

const RANGE_LABEL = { hour: "Hour", day: "Day", week: "Week" } as const;

/** A DLQ's health: the sampler's figures, depth and inflow over an hour, a day or a week, and its open findings with their fix. */
export default async function DlqHealthPage({
  params,
  searchParams,
}: {
  params: Promise<Params>;
  searchParams: Promise<Search>;
}) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const rawRange = (await searchParams).range;
  const range = parseRange(Array.isArray(rawRange) ? rawRange[0] : rawRange);
  const actor = await requirePageActor(healthHref(connectionId, queue, range ?? undefined));
  if (!range) {
    return (
      <main className="page">
        <DlqCrumbTrail name={connectionName(connectionId)} connectionId={connectionId} queue={queue} current="health" />
        <Problem
          title="This link's options are not valid."
          back={{ href: healthHref(connectionId, queue), label: "← Open the DLQ's health" }}
          testId="bad-params"
        >
          <p>range must be hour, day or week.</p>
        </Problem>
      </main>
    );
  }
  const meta = await requestMeta();
  const settings = operationsDisplaySettings();
  const { value, problem } = await loadOrProblem(async () => {
    const [ops, findings] = await Promise.all([
      viewDlqOperations(actor, meta, { connectionId, queue, range }),
      listFindings(actor, meta, { state: "open", connectionId, queue }),
    ]);
    return { ops, findings };
  });
  const shared = value
    ? { connectionId, queue, initial: value.ops, refreshSeconds: settings.sampleIntervalSeconds }
    : null;
  return (
    <main className="page health-page">
      <DlqHead actor={actor} connectionId={connectionId} queue={queue} current="health" />
      {!value || !shared ? (
        <Problem title="The DLQ's operations figures could not be read.">
          <p>{problem}</p>
        </Problem>
      ) : (
        <>
          <section className="section" aria-labelledby="figures-h">
            <h2 id="figures-h">Figures</h2>
            <DlqFigures {...shared} warnHours={settings.deadlineWarnHours} renderedAt={Date.now()} />
          </section>
          <section className="section" aria-labelledby="charts-h">
            <div className="toolbar">
              <h2 id="charts-h" style={{ margin: 0 }}>
                Depth and inflow
              </h2>
              <nav className="segmented" aria-label="Range" data-testid="range-switch">
                {CHART_RANGE_NAMES.map((r) => (
                  <Link
                    key={r}
                    href={healthHref(connectionId, queue, r)}
                    className="btn btn-small"
                    aria-current={r === range ? "true" : undefined}
                    data-testid={`range-${r}`}
                    scroll={false}
                  >
                    {RANGE_LABEL[r]}
                  </Link>
                ))}
              </nav>
              <span className="hint">
                Times in UTC. Refreshes every {Math.max(10, settings.sampleIntervalSeconds)} s.
              </span>
            </div>
            <DlqCharts key={range} {...shared} />
          </section>
          <section className="section" aria-labelledby="findings-h">
            <div className="toolbar">
              <h2 id="findings-h" style={{ margin: 0 }}>
                Open findings
              </h2>
              <span className="spacer" />
              <Link
                href={findingsHref({ state: "all", connection: connectionId, dlq: queue })}
                data-testid="findings-history-link"
              >
                All findings of this DLQ, with history →
              </Link>
            </div>
            <FindingsTable
              findings={value.findings}
              canAcknowledge={can(actor.role, "ops:acknowledge")}
              connectionNames={{}}
              dlqColumns={false}
              empty="No open finding for this DLQ: the sampler found nothing in its configuration that loses or risks letters."
            />
          </section>
        </>
      )}
    </main>
  );
}
