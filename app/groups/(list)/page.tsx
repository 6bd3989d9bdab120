import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { offsetText } from "@/components/consumer-groups/figures";
import { OperationsPage } from "@/components/jobs/operations-page";
import { RelativeTime } from "@/components/ui/relative-time";
import { EmptyRow } from "@/components/ui/empty-row";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { groupHref } from "@/lib/consumer-groups/links";
import { listConsumerGroups } from "@/lib/consumer-groups/use-cases";
import { formatSpan } from "@/lib/format";
import { loadOrProblem } from "@/lib/use-case/app-error";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Consumer groups" };

/**
 * Every consumer group of every Kafka connection, as the last sampling round saw it: members, lag,
 * and how many partitions are stuck (committed offset unchanged with lag for the connection's
 * `stuckAfterSeconds`). Stuck groups first.
 */
export default async function GroupsPage() {
  const actor = await requirePageActor("/groups");
  const { value: connections, problem } = await loadOrProblem(async () =>
    listConsumerGroups(actor, await requestMeta()),
  );
  return (
    <OperationsPage
      title="Consumer groups"
      note="Kafka consumer groups, from the console's periodic samples. A partition is stuck when its committed offset stands still while it has lag."
      problem={problem}
    >
      {(connections ?? []).length === 0 ? (
        <p className="muted">
          No Kafka connection samples its consumer groups (consumerGroups.sample in the console&apos;s configuration).
        </p>
      ) : null}
      {(connections ?? []).map((c) => (
        <section
          key={c.connectionId}
          id={c.connectionId}
          className="card section"
          data-testid="groups-connection"
          data-connection={c.connectionId}
        >
          <div className="card-head">
            <h2>{c.name}</h2>
            <span className="spacer" />
            <span className="muted">
              {c.round ? (
                <>
                  sampled <RelativeTime value={c.round.sampledAt.toISOString()} /> · stuck after{" "}
                  {formatSpan(c.stuckAfterMs)}
                </>
              ) : (
                "not sampled yet"
              )}
            </span>
          </div>
          {c.round?.error ? (
            <div className="banner banner-warn" role="status" data-testid="groups-round-error">
              <strong>The last round could not read this connection:</strong> {c.round.error} The figures below are from
              the last round that could.
            </div>
          ) : null}
          <div className="table-wrap">
            <table className="grid" data-testid="groups-table">
              <thead>
                <tr>
                  <th scope="col">Group</th>
                  <th scope="col">State</th>
                  <th scope="col" className="num">
                    Members
                  </th>
                  <th scope="col">Topics</th>
                  <th scope="col" className="num">
                    Lag
                  </th>
                  <th scope="col">Stuck partitions</th>
                </tr>
              </thead>
              <tbody>
                <EmptyRow show={c.groups.length === 0} columns={6}>
                  No consumer groups with members or committed offsets.
                </EmptyRow>
                {c.groups.map((g) => (
                  <tr key={g.groupId} data-testid="group-row" data-group={g.groupId} data-stuck={g.stuck}>
                    <td className="wrap-anywhere">
                      <Link href={groupHref(c.connectionId, g.groupId)} className="mono" data-testid="group-link">
                        {g.groupId}
                      </Link>
                      {g.problem ? <div className="muted">{g.problem}</div> : null}
                    </td>
                    <td>{g.state}</td>
                    <td className="num">{g.members.length}</td>
                    <td className="wrap-anywhere mono">{g.topics.join(", ") || "—"}</td>
                    <td className="num mono">{offsetText(g.lag)}</td>
                    <td>
                      {g.stuck > 0 ? (
                        <span className="badge badge-danger" data-testid="group-stuck">
                          {g.stuck} stuck
                        </span>
                      ) : (
                        <span className="muted">none</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ))}
    </OperationsPage>
  );
}
