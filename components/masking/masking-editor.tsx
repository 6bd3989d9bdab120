"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { saveMaskingRulesAction } from "@/app/admin/masking/actions";
import { validateMaskingRules, validateSensitiveDlqs, type MaskingRule, type SensitiveDlq } from "@/lib/masking/types";

const sensitiveText = (list: SensitiveDlq[]) => list.map((s) => `${s.connectionId} ${s.pattern}`).join("\n");

function parseSensitive(text: string): SensitiveDlq[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((l, i) => {
      const parts = l.split(/\s+/);
      if (parts.length !== 2)
        throw new Error(`Sensitive DLQ line ${i + 1}: write "<connection id or *> <DLQ name glob>".`);
      return { connectionId: parts[0], pattern: parts[1] };
    });
}

/**
 * The masking rules as JSON (checked as typed with the same validation the server runs) and the
 * sensitive DLQ patterns, one per line. Saving sends both with the version they were read at.
 */
export function MaskingEditor({
  rules,
  sensitive,
  version,
  detectors,
}: {
  rules: MaskingRule[];
  sensitive: SensitiveDlq[];
  version: number;
  detectors: string[];
}) {
  const router = useRouter();
  const [rulesText, setRulesText] = useState(() => JSON.stringify(rules, null, 2));
  const [sensText, setSensText] = useState(() => sensitiveText(sensitive));
  const [base, setBase] = useState(version);
  const [message, setMessage] = useState<{ tone: "ok" | "error"; text: string } | null>(null);
  const [pending, start] = useTransition();

  let problem: string | null = null;
  let parsed: { rules: MaskingRule[]; sensitive: SensitiveDlq[] } | null = null;
  try {
    parsed = {
      rules: validateMaskingRules(JSON.parse(rulesText)),
      sensitive: validateSensitiveDlqs(parseSensitive(sensText)),
    };
  } catch (e) {
    problem = e instanceof SyntaxError ? `Rules JSON: ${e.message}` : (e as Error).message;
  }

  const save = () => {
    if (!parsed) return;
    setMessage(null);
    const body = parsed;
    start(async () => {
      const r = await saveMaskingRulesAction({ ...body, expectedVersion: base });
      if (!r.ok) return setMessage({ tone: "error", text: r.error.message });
      setBase(r.data.version);
      setRulesText(JSON.stringify(r.data.rules, null, 2));
      setSensText(sensitiveText(r.data.sensitive));
      setMessage({
        tone: "ok",
        text: `Saved as version ${r.data.version}. It applies to the next page, download or export.`,
      });
      router.refresh();
    });
  };

  return (
    <div data-testid="masking-editor">
      <section className="card section">
        <h2>Rules</h2>
        <p className="hint">
          Each rule: <code>id</code>, <code>target</code> (
          <code>{`{"kind":"field","paths":["$.card.number","*.email","password"]}`}</code>,{" "}
          <code>{`{"kind":"header","names":["authorization","x-*-token"]}`}</code> or{" "}
          <code>{`{"kind":"detector","detector":"card"}`}</code> with detectors {detectors.join(", ")}),{" "}
          <code>action</code> (<code>hide</code>, <code>{`{"kind":"keep-last","n":4}`}</code>, <code>hash</code>),{" "}
          <code>roles</code>, <code>enabled</code>.
        </p>
        <textarea
          aria-label="Masking rules (JSON)"
          className="mono"
          value={rulesText}
          onChange={(e) => setRulesText(e.target.value)}
          rows={24}
          spellCheck={false}
          style={{ width: "100%" }}
          data-testid="masking-rules"
        />
      </section>
      <section className="card section">
        <h2>Sensitive DLQs</h2>
        <p className="hint">
          One per line: a connection id (or <code>*</code> for all) and a DLQ name glob, e.g. <code>* payments.*</code>.
          Viewers see no payloads there; every rule applies to operators and admins.
        </p>
        <textarea
          aria-label="Sensitive DLQs"
          className="mono"
          value={sensText}
          onChange={(e) => setSensText(e.target.value)}
          rows={6}
          spellCheck={false}
          style={{ width: "100%" }}
          data-testid="masking-sensitive"
        />
      </section>
      {problem ? (
        <p className="banner banner-warn" role="status" data-testid="masking-problem">
          {problem}
        </p>
      ) : null}
      {message ? (
        <p
          className={`banner ${message.tone === "ok" ? "banner-info" : "banner-warn"}`}
          role="status"
          data-testid="masking-message"
        >
          {message.text}
        </p>
      ) : null}
      <div className="toolbar">
        <span className="hint">
          version <span data-testid="masking-version">{base}</span>
        </span>
        <button
          type="button"
          className="btn btn-primary"
          onClick={save}
          disabled={pending || !parsed}
          data-testid="masking-save"
        >
          {pending ? "Saving…" : "Save rules"}
        </button>
      </div>
    </div>
  );
}
