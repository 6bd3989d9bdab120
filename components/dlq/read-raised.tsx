import type { Letter } from "@/lib/brokers/contract/letter";

/** "this view's read raised the receive count by 1": said beside a count that reading the letter raised. */
export function ReadRaisedNote({
  raised,
  field,
  label,
  scope = "this view's read",
}: {
  raised: Letter["readRaised"] | null | undefined;
  field: "count" | "deliveryCount";
  label: string;
  scope?: string;
}) {
  if (!raised || raised.field !== field || raised.by <= 0) return null;
  return (
    <span className="muted" data-testid="read-raised">
      {" "}
      ({scope} raised the {label.toLowerCase()} by {raised.by})
    </span>
  );
}
