"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { createAlertRuleAction, updateAlertRuleAction } from "@/app/alerts/actions";
import {
  ALERT_KINDS,
  FINDING_SEVERITIES,
  KIND_LABELS,
  isGroupKind,
  type AlertKind,
  type GroupAlertKind,
} from "@/lib/alerts/rules";

export interface RuleFormValues {
  id: string;
  name: string;
  kind: string;
  params: Record<string, unknown>;
  connectionId: string | null;
  queuePattern: string | null;
  ownerTeam: string | null;
  enabled: boolean;
  webhookOrigin: string;
}

type ThresholdKind = "depth_above" | "inflow_within" | "oldest_above" | "deadline_within";

const DEFAULT_THRESHOLD: Record<ThresholdKind, number> = {
  depth_above: 100,
  inflow_within: 15,
  oldest_above: 60,
  deadline_within: 24 * 60,
};

const PARAM_OF: Record<ThresholdKind, "depth" | "minutes"> = {
  depth_above: "depth",
  inflow_within: "minutes",
  oldest_above: "minutes",
  deadline_within: "minutes",
};

const isThresholdKind = (k: AlertKind): k is ThresholdKind => k in PARAM_OF;

function thresholdOf(kind: AlertKind, params: Record<string, unknown> | undefined): string {
  if (!isThresholdKind(kind)) return "";
  const v = params?.[PARAM_OF[kind]];
  return typeof v === "number" ? String(v) : String(DEFAULT_THRESHOLD[kind]);
}

const numberOr = (v: unknown, fallback: number) => String(typeof v === "number" ? v : fallback);

/** What a failure-group rule sends, under the condition picker. */
const GROUP_HINT: Record<GroupAlertKind, string> = {
  group_new:
    "One message per failure group the console sees for the first time in a matching DLQ, naming its exception and message as a viewer sees them (masked).",
  group_regressed:
    "One message each time a group an operator resolved gets a letter dead-lettered after the resolve, or an ignore ends because letters arrived.",
  group_grew:
    "One message when a group's letters that arrived within the window reach the count; again only after it fell below and crosses again.",
};

function paramsOf(
  kind: AlertKind,
  v: { threshold: string; severity: string; letters: string; minutes: string },
): Record<string, unknown> {
  if (kind === "finding_at_least") return { severity: v.severity };
  if (kind === "group_grew") return { letters: Number(v.letters), minutes: Number(v.minutes) };
  if (isGroupKind(kind)) return {};
  return { [PARAM_OF[kind]]: Number(v.threshold) };
}

/** Create or change an alert rule. Editing never shows the saved webhook URL (its path may hold a token): an empty field keeps it. */
export function RuleForm({
  initial,
  connections,
  teams,
}: {
  initial?: RuleFormValues;
  connections: Array<{ id: string; name: string }>;
  teams: string[];
}) {
  const router = useRouter();
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const [kind, setKind] = useState<AlertKind>(
    (ALERT_KINDS as readonly string[]).includes(initial?.kind ?? "") ? (initial!.kind as AlertKind) : "depth_above",
  );
  const [threshold, setThreshold] = useState(() => thresholdOf(kind, initial?.params));
  const [severity, setSeverity] = useState(
    typeof initial?.params?.severity === "string" ? (initial.params.severity as string) : "warning",
  );
  const [letters, setLetters] = useState(() => numberOr(initial?.params?.letters, 50));
  const [minutes, setMinutes] = useState(() => numberOr(initial?.params?.minutes, 10));

  return (
    <form
      className="form-stack card"
      style={{ maxWidth: 720 }}
      data-testid="alert-rule-form"
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        const text = (k: string) => String(f.get(k) ?? "").trim();
        const params = paramsOf(kind, { threshold, severity, letters, minutes });
        const fields = {
          name: text("name"),
          kind,
          params,
          connectionId: text("connectionId") || null,
          queuePattern: text("queuePattern") || null,
          ownerTeam: text("ownerTeam") || null,
          webhookUrl: text("webhookUrl") || null,
          enabled: f.get("enabled") === "on",
        };
        setError(null);
        start(async () => {
          const r = initial
            ? await updateAlertRuleAction({ ...fields, id: initial.id })
            : await createAlertRuleAction(fields);
          if (!r.ok) return setError(r.error.message);
          router.push(`/alerts/${r.data.id}`);
          router.refresh();
        });
      }}
    >
      <label>
        Name
        <input
          name="name"
          required
          maxLength={100}
          defaultValue={initial?.name ?? ""}
          autoComplete="off"
          data-testid="alert-rule-name"
        />
      </label>
      <fieldset className="form-row" style={{ border: 0, padding: 0, margin: 0 }}>
        <legend className="small muted">Fires when</legend>
        <label>
          Condition
          <select
            name="kind"
            value={kind}
            data-testid="alert-rule-kind"
            onChange={(e) => {
              const k = e.target.value as AlertKind;
              setKind(k);
              setThreshold(thresholdOf(k, k === initial?.kind ? initial.params : undefined));
            }}
          >
            {ALERT_KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND_LABELS[k].label}
              </option>
            ))}
          </select>
        </label>
        {kind === "finding_at_least" ? (
          <label>
            Severity
            <select
              name="severity"
              value={severity}
              onChange={(e) => setSeverity(e.target.value)}
              data-testid="alert-rule-severity"
            >
              {[...FINDING_SEVERITIES].reverse().map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
        ) : kind === "group_grew" ? (
          <>
            <label>
              letters or more
              <input
                name="letters"
                type="number"
                required
                min={1}
                step={1}
                value={letters}
                onChange={(e) => setLetters(e.target.value)}
                style={{ width: 120 }}
                data-testid="alert-rule-letters"
              />
            </label>
            <label>
              within minutes
              <input
                name="minutes"
                type="number"
                required
                min={1}
                max={24 * 60}
                step={1}
                value={minutes}
                onChange={(e) => setMinutes(e.target.value)}
                style={{ width: 120 }}
                data-testid="alert-rule-minutes"
              />
            </label>
          </>
        ) : isThresholdKind(kind) ? (
          <label>
            {KIND_LABELS[kind].unit}
            <input
              name="threshold"
              type="number"
              required
              min={kind === "depth_above" ? 0 : 1}
              step={1}
              value={threshold}
              onChange={(e) => setThreshold(e.target.value)}
              style={{ width: 120 }}
              data-testid="alert-rule-threshold"
            />
          </label>
        ) : null}
        {isGroupKind(kind) ? (
          <p className="hint" style={{ flexBasis: "100%", margin: 0 }} data-testid="alert-rule-group-hint">
            {GROUP_HINT[kind]} Ignored groups never alert.
          </p>
        ) : null}
      </fieldset>
      <fieldset className="form-row" style={{ border: 0, padding: 0, margin: 0 }}>
        <legend className="small muted">For the DLQs matching every field set (none: every DLQ)</legend>
        <label>
          Connection
          <select name="connectionId" defaultValue={initial?.connectionId ?? ""} data-testid="alert-rule-connection">
            <option value="">any connection</option>
            {connections.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name === c.id ? c.id : `${c.name} (${c.id})`}
              </option>
            ))}
          </select>
        </label>
        <label>
          DLQ name pattern
          <input
            name="queuePattern"
            maxLength={200}
            defaultValue={initial?.queuePattern ?? ""}
            placeholder="orders.* (any when empty)"
            autoComplete="off"
            data-testid="alert-rule-pattern"
          />
        </label>
        <label>
          Owning team
          <input
            name="ownerTeam"
            maxLength={100}
            list="alert-rule-teams"
            defaultValue={initial?.ownerTeam ?? ""}
            placeholder="any team"
            autoComplete="off"
            data-testid="alert-rule-team"
          />
          <datalist id="alert-rule-teams">
            {teams.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </label>
      </fieldset>
      <label>
        Webhook URL (Slack-compatible)
        <input
          name="webhookUrl"
          type="url"
          required={!initial}
          maxLength={2000}
          autoComplete="off"
          placeholder={initial ? `unchanged: ${initial.webhookOrigin}/…` : "https://hooks.slack.com/services/…"}
          data-testid="alert-rule-webhook"
        />
        <span className="hint">
          {initial
            ? "Leave empty to keep the saved URL; only its origin is ever shown, since the path may hold a token. "
            : ""}
          https to a public host, or a host listed in the configuration&apos;s operations.webhookAllowedHosts.
        </span>
      </label>
      <label style={{ flexDirection: "row", alignItems: "center", gap: 6 }}>
        <input
          name="enabled"
          type="checkbox"
          defaultChecked={initial?.enabled ?? true}
          data-testid="alert-rule-enabled"
        />
        Enabled
      </label>
      <div className="form-row">
        <button type="submit" className="btn btn-primary" disabled={pending} data-testid="alert-rule-submit">
          {pending ? "Saving…" : initial ? "Save changes" : "Create rule"}
        </button>
        <a className="btn btn-quiet" href={initial ? `/alerts/${initial.id}` : "/alerts"}>
          Cancel
        </a>
      </div>
      {error ? (
        <p className="form-error" role="alert" data-testid="alert-rule-error" style={{ margin: 0 }}>
          {error}
        </p>
      ) : null}
    </form>
  );
}
