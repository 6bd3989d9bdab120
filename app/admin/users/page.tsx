import type { Metadata } from "next";
import { RelativeTime } from "@/components/ui/relative-time";
import { CreateUserForm } from "@/components/users/create-user-form";
import { UserRowActions } from "@/components/users/user-row-actions";
import { authorizePage } from "@/lib/auth/authorize-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { listUsersAsAdmin } from "@/lib/users-admin";

export const metadata: Metadata = { title: "Users" };
export const dynamic = "force-dynamic";

export default async function UsersPage() {
  const actor = await requirePageActor("/admin/users");
  // Before anything streams, so a refusal answers 403 (./forbidden.tsx); audited as user.list.
  await authorizePage(actor, "users:manage", { action: "user.list", meta: await requestMeta() });
  const users = await listUsersAsAdmin(actor, await requestMeta());
  return (
    <main className="page">
      <div className="page-head">
        <h1>Users</h1>
        <span className="meta">
          Every change is recorded in the audit log. Disabled users are signed out on their next request.
        </span>
      </div>
      <h2>Create a user</h2>
      <CreateUserForm />
      <div className="section table-wrap">
        <table className="grid" data-testid="users-table">
          <thead>
            <tr>
              <th>Email</th>
              <th>Name</th>
              <th>Role</th>
              <th>Status</th>
              <th>Created</th>
              <th>Change</th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id} data-testid="user-row" data-email={u.email}>
                <td className="wrap-anywhere">
                  {u.email}
                  {u.id === actor.id ? <span className="muted"> (you)</span> : null}
                </td>
                <td>{u.name ?? <span className="muted">—</span>}</td>
                <td>{u.role}</td>
                <td>
                  {u.disabled ? (
                    <span className="badge badge-danger">disabled</span>
                  ) : (
                    <span className="badge badge-ok">active</span>
                  )}
                </td>
                <td className="nowrap">
                  <RelativeTime value={u.createdAt} />
                </td>
                <td>
                  <UserRowActions id={u.id} role={u.role} disabled={u.disabled} isSelf={u.id === actor.id} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </main>
  );
}
