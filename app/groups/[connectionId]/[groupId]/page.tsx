import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { notFound } from "next/navigation";
import { offsetText, PartitionState } from "@/components/consumer-groups/figures";
import { Problem } from "@/components/ui/problem";
import { RelativeTime } from "@/components/ui/relative-time";
import { EmptyRow } from "@/components/ui/empty-row";
import { EscapeBack } from "@/components/ui/escape-back";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { groupHref, groupsHref, partitionHref } from "@/lib/consumer-groups/links";
import { viewConsumerGroup, type GroupView } from "@/lib/consumer-groups/use-cases";
import { decodeParam } from "@/lib/dlq/links";
import { formatSpan } from "@/lib/format";
import { asAppError } from "@/lib/errors";

export const dynamic = "force-dynamic";

type Params = { connectionId: string; groupId: string };

export async function generateMetadata({ params }: { params: Promise<Params> }): Promise<Metadata> {
  return { title: `Group ${decodeParam((await params).groupId).slice(0, 40)}` };
}

/** One consumer group: its members and, per partition, committed and end offsets, lag, and whether it is stuck. */
export default async function GroupPage({ params }: { params: Promise<Params> }) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const groupId = decodeParam(p.groupId);
  const actor = await requirePageActor(groupHref(connectionId, groupId));
  const back = groupsHref();
  let v: GroupView;
  try {
    v = await viewConsumerGroup(actor, await requestMeta(), { connectionId, groupId });
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    if (err.type === "not_found") notFound();
    return (
      <main className="page">
        <Problem title="The consumer group could not be read." back={{ href: back, label: "← Consumer groups" }}>
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const { group: g, partitions } = v;
  return (
    <main className="page">
      <EscapeBack href={back} />
      <div className="breadcrumbs">
        <Link href={back}>Consumer groups</Link> / {v.connectionName} / <span className="mono">{g.groupId}</span>
      </div>
      <div className="page-head">
        <h1 className="wrap-anywhere">{g.groupId}</h1>
        <span className="badge" data-testid="group-state">
          {g.state}
        </span>
        {g.stuck > 0 ? <span className="badge badge-danger">{g.stuck} stuck</span> : null}
        <span className="meta">
          sampled <RelativeTime value={g.sampledAt.toISOString()} /> · stuck after {formatSpan(v.stuckAfterMs)} without
          a move
        </span>
      </div>
      {v.round?.error ? (
        <div className="banner banner-warn" role="status">
          <strong>The last round could not read this connection:</strong> {v.round.error}
        </div>
      ) : null}
      {g.problem ? (
        <div className="banner banner-warn" role="status">
          {g.problem}
        </div>
      ) : null}
      <section className="card section" data-testid="group-members">
        <h2>
          Members <span className="muted">({g.members.length})</span>
        </h2>
        {g.members.length === 0 ? (
          <p className="muted">
            No active members: the group&apos;s offsets may be changed (Kafka allows it only now).
          </p>
        ) : (
          <div className="table-wrap">
            <table className="grid">
              <thead>
                <tr>
                  <th scope="col">Client</th>
                  <th scope="col">Host</th>
                  <th scope="col">Assigned</th>
                </tr>
              </thead>
              <tbody>
                {g.members.map((m) => (
                  <tr key={m.memberId} data-testid="member-row">
                    <td className="mono wrap-anywhere" title={m.memberId}>
                      {m.clientId}
                    </td>
                    <td className="mono">{m.host}</td>
                    <td className="mono wrap-anywhere">
                      {m.assignments.map((a) => `${a.topic} [${a.partitions.join(", ")}]`).join("; ") || "—"}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section className="card section">
        <h2>Partitions</h2>
        <div className="table-wrap">
          <table className="grid" data-testid="partitions-table">
            <thead>
              <tr>
                <th scope="col">Topic</th>
                <th scope="col" className="num">
                  Partition
                </th>
                <th scope="col" className="num">
                  Committed
                </th>
                <th scope="col" className="num">
                  End
                </th>
                <th scope="col" className="num">
                  Lag
                </th>
                <th scope="col">State</th>
                <th scope="col">Member</th>
                <th scope="col">Next record</th>
              </tr>
            </thead>
            <tbody>
              <EmptyRow show={partitions.length === 0} columns={8}>
                No partitions with a committed offset or an assignment.
              </EmptyRow>
              {partitions.map((r) => (
                <tr
                  key={`${r.topic}/${r.partition}`}
                  data-testid="partition-row"
                  data-topic={r.topic}
                  data-partition={r.partition}
                  data-stuck={r.stuck}
                >
                  <td className="mono wrap-anywhere">{r.topic}</td>
                  <td className="num">{r.partition}</td>
                  <td className="num mono">{offsetText(r.committed)}</td>
                  <td className="num mono">{offsetText(r.end)}</td>
                  <td className="num mono">{offsetText(r.lag)}</td>
                  <td>
                    <PartitionState lag={r.lag} stuck={r.stuck} since={r.since} stuckForMs={r.stuckForMs} />
                  </td>
                  <td className="mono wrap-anywhere">{r.member ?? <span className="muted">—</span>}</td>
                  <td>
                    {r.lag > 0n ? (
                      <Link
                        href={partitionHref(connectionId, g.groupId, r.topic, r.partition)}
                        data-testid="partition-link"
                      >
                        {r.stuck ? "The record it is stuck on" : "Next record"}
                      </Link>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </main>
  );
}
