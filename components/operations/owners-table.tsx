"use client";

import { useRouter } from "next/navigation";
import { Fragment, useState, useTransition } from "react";
import { deleteOwnerAction, saveOwnerAction } from "@/app/owners/actions";
import { EmptyRow } from "@/components/ui/empty-row";
import { useHydrated } from "@/components/ui/use-hydrated";
import type { OwnerEntryView } from "@/lib/operations/use-cases";
import { OwnerForm } from "./owner-form";

type ConsoleEntry = OwnerEntryView & { id: string };

/**
 * Owner entries in the order they match a DLQ (the first match names its owner): the console's
 * rows by position, then the config file's. Admins edit, reorder and delete the console's rows;
 * the config file's are read-only here. Patterns, teams and contacts are shown as text.
 */
export function OwnersTable({ entries, canManage }: { entries: OwnerEntryView[]; canManage: boolean }) {
  const router = useRouter();
  const hydrated = useHydrated();
  const [editing, setEditing] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const consoleRows = entries.filter((e): e is ConsoleEntry => e.source === "console" && e.id !== null);
  const busy = !hydrated || pending;
  const columns = canManage ? 8 : 7;

  /** Moves a console row one place; every console row whose position changes is saved (each save audited). */
  const move = (id: string, by: -1 | 1) =>
    start(async () => {
      setError(null);
      const order = [...consoleRows];
      const i = order.findIndex((e) => e.id === id);
      const j = i + by;
      if (i < 0 || j < 0 || j >= order.length) return;
      [order[i], order[j]] = [order[j], order[i]];
      for (const [k, e] of order.entries()) {
        const position = k * 10;
        if (e.position === position) continue;
        const r = await saveOwnerAction({
          id: e.id,
          position,
          connectionPattern: e.connectionPattern ?? "",
          queuePattern: e.queuePattern,
          team: e.team,
          contact: e.contact,
        });
        if (!r.ok) {
          setError(r.error.message);
          break;
        }
      }
      router.refresh();
    });

  const remove = (id: string) =>
    start(async () => {
      setError(null);
      const r = await deleteOwnerAction({ id });
      setConfirming(null);
      if (!r.ok) setError(r.error.message);
      router.refresh();
    });

  return (
    <>
      {error ? (
        <div className="form-error" role="alert" data-testid="owners-error">
          {error}
        </div>
      ) : null}
      <div className="table-wrap">
        <table className="grid owners" data-testid="owners-table">
          <thead>
            <tr>
              <th className="num" title="The first entry that matches a DLQ names its owner">
                Order
              </th>
              <th>Connection</th>
              <th>DLQ pattern</th>
              <th>Team</th>
              <th>Contact</th>
              <th>Source</th>
              <th className="num">Position</th>
              {canManage ? <th>Change</th> : null}
            </tr>
          </thead>
          <tbody>
            {entries.map((e, i) => {
              const key = e.id ?? `config-${e.position}`;
              const ci = e.id ? consoleRows.findIndex((c) => c.id === e.id) : -1;
              return (
                <Fragment key={key}>
                  <tr
                    data-testid="owner-row"
                    data-source={e.source}
                    data-id={e.id ?? ""}
                    data-queue-pattern={e.queuePattern}
                    data-team={e.team}
                  >
                    <td className="num">{i + 1}</td>
                    <td className="mono wrap-anywhere">{e.connectionPattern ?? <span className="muted">any</span>}</td>
                    <td className="mono wrap-anywhere" data-testid="owner-pattern">
                      {e.queuePattern}
                    </td>
                    <td className="wrap-anywhere" data-testid="owner-team-cell">
                      {e.team}
                    </td>
                    <td className="wrap-anywhere">{e.contact}</td>
                    <td>
                      {e.source === "console" ? (
                        <span className="badge badge-info" title="Set on this page">
                          console
                        </span>
                      ) : (
                        <span
                          className="badge"
                          title="From the console's config file (owners): change it there"
                          data-testid="owner-config-badge"
                        >
                          config file · read-only
                        </span>
                      )}
                    </td>
                    <td className="num">{e.source === "console" ? e.position : <span className="muted">—</span>}</td>
                    {canManage ? (
                      <td className="nowrap">
                        {e.source === "console" && e.id ? (
                          confirming === e.id ? (
                            <span className="owner-actions">
                              Delete this entry?
                              <button
                                type="button"
                                className="btn btn-small btn-danger"
                                disabled={busy}
                                onClick={() => remove(e.id!)}
                                data-testid="owner-delete-confirm"
                              >
                                Delete
                              </button>
                              <button
                                type="button"
                                className="btn btn-small btn-quiet"
                                disabled={busy}
                                onClick={() => setConfirming(null)}
                              >
                                Keep
                              </button>
                            </span>
                          ) : (
                            <span className="owner-actions">
                              <button
                                type="button"
                                className="btn btn-small"
                                disabled={busy || ci <= 0}
                                onClick={() => move(e.id!, -1)}
                                title="Match earlier"
                                aria-label="Move up"
                                data-testid="owner-up"
                              >
                                ↑
                              </button>
                              <button
                                type="button"
                                className="btn btn-small"
                                disabled={busy || ci < 0 || ci >= consoleRows.length - 1}
                                onClick={() => move(e.id!, 1)}
                                title="Match later"
                                aria-label="Move down"
                                data-testid="owner-down"
                              >
                                ↓
                              </button>
                              <button
                                type="button"
                                className="btn btn-small"
                                disabled={busy}
                                onClick={() => setEditing(editing === e.id ? null : e.id)}
                                data-testid="owner-edit"
                              >
                                Edit
                              </button>
                              <button
                                type="button"
                                className="btn btn-small btn-danger"
                                disabled={busy}
                                onClick={() => setConfirming(e.id)}
                                data-testid="owner-delete"
                              >
                                Delete
                              </button>
                            </span>
                          )
                        ) : (
                          <span className="muted small">edit in the config file</span>
                        )}
                      </td>
                    ) : null}
                  </tr>
                  {canManage && editing === e.id && e.id ? (
                    <tr className="owner-edit-row">
                      <td colSpan={columns}>
                        <OwnerForm
                          testId="owner-edit-form"
                          draft={{
                            id: e.id,
                            position: e.position,
                            connectionPattern: e.connectionPattern,
                            queuePattern: e.queuePattern,
                            team: e.team,
                            contact: e.contact,
                          }}
                          onDone={() => setEditing(null)}
                        />
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              );
            })}
            <EmptyRow show={entries.length === 0} columns={columns}>
              No owner entries yet. {canManage ? "Add one below, or" : "An admin adds them here, or"} in the
              console&apos;s config file (owners).
            </EmptyRow>
          </tbody>
        </table>
      </div>
    </>
  );
}
