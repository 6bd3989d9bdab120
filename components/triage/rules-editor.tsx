"use client";

import { useRouter } from "next/navigation";
import { useMemo, useState, useTransition } from "react";
import { saveRulesAction } from "@/app/admin/triage-rules/actions";
import { validateRule, type ClassificationRule } from "@/lib/triage/classify";
import { EmptyRow } from "@/components/ui/empty-row";

type Draft = ClassificationRule & { key: number };

function ruleError(r: ClassificationRule, ids: Map<string, number>): string | null {
  try {
    validateRule(r);
  } catch (e) {
    return (e as Error).message.replace(/^Rule "[^"]*": /, "");
  }
  return (ids.get(r.id) ?? 0) > 1 ? "This id is used by another rule." : null;
}

/**
 * The ordered classification rules: first match wins. Each rule is checked as it is typed (the same
 * validateRule the server runs); saving sends the whole list with the version it was read at, so a
 * concurrent edit is refused rather than overwritten.
 */
export function RulesEditor({
  initial,
  version,
  canEdit,
}: {
  initial: ClassificationRule[];
  version: number;
  canEdit: boolean;
}) {
  const router = useRouter();
  const [rules, setRules] = useState<Draft[]>(() => initial.map((r, i) => ({ ...r, key: i })));
  const [nextKey, setNextKey] = useState(initial.length);
  const [base, setBase] = useState(version);
  const [message, setMessage] = useState<{ tone: "ok" | "error"; text: string; conflict?: boolean } | null>(null);
  const [serverRuleError, setServerRuleError] = useState<{ id: string; text: string } | null>(null);
  const [pending, start] = useTransition();

  const ids = useMemo(() => {
    const m = new Map<string, number>();
    for (const r of rules) m.set(r.id, (m.get(r.id) ?? 0) + 1);
    return m;
  }, [rules]);
  const errors = rules.map((r) => ruleError(r, ids));
  const invalid = errors.filter(Boolean).length;
  const dirty = JSON.stringify(rules.map(({ key: _k, ...r }) => r)) !== JSON.stringify(initial);

  const update = (key: number, change: Partial<ClassificationRule>) =>
    setRules((rs) => rs.map((r) => (r.key === key ? { ...r, ...change } : r)));
  const move = (i: number, d: -1 | 1) =>
    setRules((rs) => {
      const j = i + d;
      if (j < 0 || j >= rs.length) return rs;
      const copy = [...rs];
      [copy[i], copy[j]] = [copy[j], copy[i]];
      return copy;
    });
  const remove = (key: number) => setRules((rs) => rs.filter((r) => r.key !== key));
  const add = () => {
    setRules((rs) => [
      ...rs,
      {
        key: nextKey,
        id: `custom.rule-${nextKey + 1}`,
        disposition: "transient",
        field: "any",
        pattern: "",
        description: "",
      },
    ]);
    setNextKey((k) => k + 1);
  };

  const save = () => {
    setMessage(null);
    setServerRuleError(null);
    start(async () => {
      const r = await saveRulesAction({ rules: rules.map(({ key: _k, ...rule }) => rule), expectedVersion: base });
      if (!r.ok) {
        const m = /^Rule "([^"]+)": (.*)$/.exec(r.error.message);
        if (m) setServerRuleError({ id: m[1], text: m[2] });
        setMessage({ tone: "error", text: r.error.message, conflict: r.error.code.startsWith("conflict") });
        return;
      }
      setBase(r.data.version);
      setRules(r.data.rules.map((x, i) => ({ ...x, key: i })));
      setNextKey(r.data.rules.length);
      setMessage({
        tone: "ok",
        text: `Saved as version ${r.data.version}. Groups are re-labelled the next time they are shown.`,
      });
      router.refresh();
    });
  };

  return (
    <div data-testid="rules-editor">
      <div className="toolbar">
        <span className="hint">
          First match wins · version <span data-testid="rules-version">{base}</span> · patterns are case-insensitive
          regular expressions in RE2 syntax (no lookaround, no backreferences)
        </span>
        <span className="spacer" />
        {canEdit ? (
          <>
            <button type="button" className="btn" onClick={add} disabled={pending} data-testid="rule-add">
              Add a rule
            </button>
            <button
              type="button"
              className="btn btn-primary"
              onClick={save}
              disabled={pending || invalid > 0 || !dirty}
              data-testid="rules-save"
            >
              {pending ? "Saving…" : invalid ? `Fix ${invalid} rule${invalid === 1 ? "" : "s"} to save` : "Save rules"}
            </button>
          </>
        ) : null}
      </div>
      {message ? (
        <div
          className={message.tone === "ok" ? "form-ok" : "form-error"}
          role={message.tone === "ok" ? "status" : "alert"}
          data-testid="rules-message"
        >
          {message.text}{" "}
          {message.conflict ? (
            <button type="button" className="btn btn-small" onClick={() => window.location.reload()}>
              Reload the rules
            </button>
          ) : null}
        </div>
      ) : null}
      <div className="table-wrap section">
        <table className="grid rules" data-testid="rules-table">
          <thead>
            <tr>
              <th className="num">#</th>
              <th>Id</th>
              <th>Disposition</th>
              <th>Matched against</th>
              <th>Pattern</th>
              <th>Description</th>
              {canEdit ? <th>Order</th> : null}
            </tr>
          </thead>
          <tbody>
            {rules.map((r, i) => {
              const err = errors[i] ?? (serverRuleError?.id === r.id ? serverRuleError.text : null);
              const errId = `rule-err-${r.key}`;
              return (
                <tr key={r.key} data-testid="rule-row" data-rule-id={r.id} className={err ? "has-error" : undefined}>
                  <td className="num">{i + 1}</td>
                  <td>
                    <input
                      className="mono"
                      value={r.id}
                      onChange={(e) => update(r.key, { id: e.target.value })}
                      disabled={!canEdit}
                      aria-label={`Rule ${i + 1} id`}
                      aria-describedby={err ? errId : undefined}
                      style={{ width: 170 }}
                      data-testid="rule-id"
                    />
                  </td>
                  <td>
                    <select
                      value={r.disposition}
                      onChange={(e) =>
                        update(r.key, { disposition: e.target.value as ClassificationRule["disposition"] })
                      }
                      disabled={!canEdit}
                      aria-label={`Rule ${i + 1} disposition`}
                      data-testid="rule-disposition"
                    >
                      <option value="transient">transient</option>
                      <option value="permanent">permanent</option>
                    </select>
                  </td>
                  <td>
                    <select
                      value={r.field}
                      onChange={(e) => update(r.key, { field: e.target.value as ClassificationRule["field"] })}
                      disabled={!canEdit}
                      aria-label={`Rule ${i + 1} field`}
                      data-testid="rule-field"
                    >
                      <option value="any">any</option>
                      <option value="class">class</option>
                      <option value="message">message</option>
                    </select>
                  </td>
                  <td className="rule-pattern">
                    <textarea
                      className="mono"
                      rows={2}
                      value={r.pattern}
                      onChange={(e) => update(r.key, { pattern: e.target.value })}
                      disabled={!canEdit}
                      aria-label={`Rule ${i + 1} pattern`}
                      aria-invalid={err ? true : undefined}
                      aria-describedby={err ? errId : undefined}
                      data-testid="rule-pattern"
                    />
                    {err ? (
                      <div className="rule-error" id={errId} data-testid="rule-error">
                        {err}
                      </div>
                    ) : null}
                  </td>
                  <td className="rule-desc">
                    <textarea
                      rows={2}
                      value={r.description}
                      onChange={(e) => update(r.key, { description: e.target.value })}
                      disabled={!canEdit}
                      aria-label={`Rule ${i + 1} description`}
                      data-testid="rule-description"
                    />
                  </td>
                  {canEdit ? (
                    <td className="nowrap">
                      <button
                        type="button"
                        className="btn btn-small"
                        onClick={() => move(i, -1)}
                        disabled={i === 0}
                        aria-label={`Move rule ${i + 1} up`}
                      >
                        ↑
                      </button>{" "}
                      <button
                        type="button"
                        className="btn btn-small"
                        onClick={() => move(i, 1)}
                        disabled={i === rules.length - 1}
                        aria-label={`Move rule ${i + 1} down`}
                      >
                        ↓
                      </button>{" "}
                      <button
                        type="button"
                        className="btn btn-small btn-quiet"
                        onClick={() => remove(r.key)}
                        aria-label={`Remove rule ${i + 1}`}
                        data-testid="rule-remove"
                      >
                        Remove
                      </button>
                    </td>
                  ) : null}
                </tr>
              );
            })}
            <EmptyRow show={rules.length === 0} columns={7}>
              No rules: every group will be labelled unknown.
            </EmptyRow>
          </tbody>
        </table>
      </div>
    </div>
  );
}
