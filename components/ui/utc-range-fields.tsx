/** A filter form's From and To fields (UTC), as the archive and the audit log take them. */
export function UtcRangeFields({ from, to }: { from: string | undefined; to: string | undefined }) {
  return (
    <>
      <label>
        From (UTC)
        <input name="from" defaultValue={from} placeholder="2025-01-31 or …T14:00" style={{ width: 150 }} />
      </label>
      <label>
        To (UTC)
        <input name="to" defaultValue={to} placeholder="YYYY-MM-DDTHH:MM" style={{ width: 150 }} />
      </label>
    </>
  );
}
