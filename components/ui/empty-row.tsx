import type { ReactNode } from "react";

/** The row a table shows when it has no other: one cell across every column, with the reason. */
export function EmptyRow({ show, columns, children }: { show: boolean; columns: number; children: ReactNode }) {
  if (!show) return null;
  return (
    <tr>
      <td colSpan={columns} className="empty">
        {children}
      </td>
    </tr>
  );
}
