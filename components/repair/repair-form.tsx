"use client";

import Link from "@/components/ui/link";
import { useDeferredValue, useMemo, useRef, useState, type FormEvent } from "react";
import { useMutation } from "@tanstack/react-query";
import { revealPayloadAction } from "@/app/dlqs/[connectionId]/[queue]/letters/[letterId]/actions";
import {
  planRepairAction,
  repairLetterAction,
} from "@/app/dlqs/[connectionId]/[queue]/letters/[letterId]/repair/actions";
import { EntriesTable } from "@/components/dlq/entries-table";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import type { RevealedLetter } from "@/lib/dlq/reveal-payload";
import { letterHref } from "@/lib/dlq/links";
import { jsonSyntaxError } from "@/lib/repair/json-syntax";
import type { LockedField } from "@/lib/repair/policy";
import type { RepairPlan, RepairResult } from "@/lib/repair/use-cases";
import { valueText } from "@/lib/text";
import {
  archivedOriginalHref,
  bodyEdit,
  bytesToBase64,
  headerEdits,
  offsetOf,
  wholeText,
  type HeaderRow,
  type PayloadKind,
} from "./edit";
import { HeaderEditor } from "./header-editor";
import { RepairDiff } from "./repair-diff";

export interface RepairFormProps {
  connectionId: string;
  queue: string;
  letterId: string;
  payloadKind: PayloadKind;
  /** The whole payload as text (JSON pretty-printed as the letter page shows it); null: only a file can replace it. */
  initialText: string | null;
  payloadNote: string | null;
  /** Values masked for this role on the letter page: editing needs the (audited) reveal first. */
  maskedCount: number;
  canReveal: boolean;
  headers: HeaderEntry[];
  properties: HeaderEntry[];
  locked: LockedField[];
  originQueue: string | null;
  maxBodyBytes: number | null;
  viewMaxBytes: number;
  bodySize: number;
  backHref: string;
}

/**
 * Where masking hides values from the admin, editing starts with the letter page's reveal (the same
 * server action, with its reason, audited `payload.reveal`): an edit made from the masked view would
 * write the mask into the message. The revealed values live in this component's state only; every
 * preview and send then carries the reveal's reason, since the server unlocks masked fields only for
 * a request that reveals (audited again).
 */
export function RepairForm(props: RepairFormProps) {
  const [revealed, setRevealed] = useState<RevealedLetter | null>(null);
  const [reason, setReason] = useState("");
  const reveal = useMutation({
    mutationFn: () =>
      revealPayloadAction({ connectionId: props.connectionId, queue: props.queue, letterId: props.letterId, reason }),
  });

  if (props.maskedCount > 0 && !revealed) {
    return (
      <section className="card section" data-testid="repair-reveal">
        <h2>Masked values</h2>
        <p>
          {props.maskedCount} value{props.maskedCount === 1 ? " is" : "s are"} masked for your role. Editing starts from
          the real values, so reveal them first; the reveal is recorded in the audit log with your reason, and kept only
          on this page.
        </p>
        {props.canReveal ? (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              reveal.mutate(undefined, { onSuccess: (r) => (r.ok ? setRevealed(r.data) : undefined) });
            }}
          >
            <label htmlFor="repair-reveal-reason">
              Why do you need the unmasked payload? (recorded in the audit log)
            </label>
            <textarea
              id="repair-reveal-reason"
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              required
              minLength={10}
              maxLength={500}
              rows={2}
              style={{ width: "100%" }}
              data-testid="repair-reveal-reason"
            />
            {reveal.data && !reveal.data.ok ? (
              <p className="banner banner-error" role="alert">
                {reveal.data.error.message}
              </p>
            ) : null}
            <button
              type="submit"
              className="btn btn-primary"
              disabled={reveal.isPending}
              data-testid="repair-reveal-submit"
            >
              {reveal.isPending ? "Revealing…" : "Reveal to edit"}
            </button>
          </form>
        ) : (
          <p className="banner banner-warn">Your role may not reveal masked values, so it cannot repair this letter.</p>
        )}
      </section>
    );
  }
  const source = revealed
    ? {
        text:
          props.payloadKind !== "binary" && wholeText(revealed.payload, props.bodySize, props.viewMaxBytes)
            ? revealed.payload.text
            : null,
        headers: revealed.headers,
        note: revealed.payload.note,
      }
    : { text: props.initialText, headers: props.headers, note: props.payloadNote };
  return (
    <RepairEditor
      {...props}
      initialText={source.text}
      headers={source.headers}
      payloadNote={source.note}
      revealed={revealed !== null}
      revealReason={revealed !== null ? reason.trim() : null}
    />
  );
}

function rowsOf(headers: HeaderEntry[], locked: LockedField[]): HeaderRow[] {
  const lockedBy = new Map(locked.filter((l) => l.kind === "header").map((l) => [l.name.toLowerCase(), l.message]));
  return headers.map((h, i) => {
    const text = valueText(h.value);
    return {
      key: `h-${i}`,
      name: h.name,
      original: text,
      value: text,
      removed: false,
      lockedBecause: lockedBy.get(h.name.toLowerCase()) ?? null,
    };
  });
}

function RepairEditor(props: RepairFormProps & { revealed: boolean; revealReason: string | null }) {
  const { connectionId, queue, letterId, payloadKind, initialText } = props;
  const [text, setText] = useState(initialText ?? "");
  const [file, setFile] = useState<{ name: string; base64: string; size: number } | null>(null);
  // Fields locked only because masking hides them are editable once revealed (the server checks the reveal).
  const locks = props.revealReason ? props.locked.filter((l) => l.reason !== "masked") : props.locked;
  const [rows, setRows] = useState(() => rowsOf(props.headers, locks));
  const [targetKind, setTargetKind] = useState<"origin" | "queue">("origin");
  const [targetName, setTargetName] = useState("");
  const [newCorrelationId, setNewCorrelationId] = useState(false);
  const [reason, setReason] = useState("");
  const [previewed, setPreviewed] = useState<{ key: string; plan: RepairPlan } | null>(null);
  const [result, setResult] = useState<RepairResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const editorRef = useRef<HTMLTextAreaElement>(null);
  const payloadLock = locks.find((l) => l.kind === "payload");
  // Checked as the admin types, with the same function the server uses, so both name the same line
  // and column; deferred so that a large payload never holds up the keystrokes.
  const typed = useDeferredValue(text);
  const syntax = useMemo(
    () => (payloadKind === "json" && !payloadLock && initialText !== null ? jsonSyntaxError(typed) : null),
    [payloadKind, payloadLock, initialText, typed],
  );

  const edit = useMemo(() => {
    const h = headerEdits(rows);
    const body = payloadLock ? undefined : bodyEdit(payloadKind, initialText, text, file?.base64 ?? null);
    return {
      connectionId,
      queue,
      letterId,
      ...(body ? { body } : {}),
      ...(Object.keys(h.setHeaders).length ? { setHeaders: h.setHeaders } : {}),
      ...(h.removeHeaders.length ? { removeHeaders: h.removeHeaders } : {}),
      ...(newCorrelationId ? { newCorrelationId } : {}),
      ...(props.revealReason ? { reveal: { reason: props.revealReason } } : {}),
      target:
        targetKind === "origin" ? ({ kind: "origin" } as const) : ({ kind: "queue", name: targetName.trim() } as const),
    };
  }, [
    rows,
    payloadLock,
    payloadKind,
    initialText,
    text,
    file,
    newCorrelationId,
    targetKind,
    targetName,
    connectionId,
    queue,
    letterId,
    props.revealReason,
  ]);
  const editKey = JSON.stringify(edit);
  // A preview holds only for the edit it was made of: any change asks for a new one before Send.
  const plan = previewed && previewed.key === editKey ? previewed.plan : null;

  const caretAt = (line: number, column: number) => {
    const area = editorRef.current;
    if (!area) return;
    const at = offsetOf(area.value, line, column);
    area.focus();
    area.setSelectionRange(at, at);
  };
  const preview = useMutation({
    mutationFn: () => planRepairAction(edit),
    onSuccess: (r) => {
      if (!r.ok) return setError(r.error.message);
      setError(null);
      setPreviewed({ key: editKey, plan: r.data });
      const bad = r.data.problems.find((p) => p.line !== undefined);
      if (bad) caretAt(bad.line!, bad.column ?? 1);
    },
  });
  const send = useMutation({
    mutationFn: () => repairLetterAction({ ...edit, reason: reason.trim() }),
    onSuccess: (r) => {
      if (!r.ok) return setError(r.error.message);
      setError(null);
      setResult(r.data);
    },
  });

  // The server's answer to a preview of this very text already names the JSON error: not said twice.
  const liveSyntax =
    syntax && !plan?.problems.some((p) => p.field === "payload" && p.line !== undefined) ? syntax : null;
  const ready = plan?.ok === true && !syntax && reason.trim().length >= 3 && !result;
  const sendHint = syntax
    ? "Fix the JSON, then preview."
    : !plan
      ? "Preview the repair first."
      : !plan.ok
        ? "Fix the problems above, then preview again."
        : reason.trim().length < 3
          ? "Give a reason."
          : null;
  const busy = preview.isPending || send.isPending;
  const locked = result !== null;

  const onFile = async (f: File | undefined) => {
    if (!f) return setFile(null);
    setFile({ name: f.name, size: f.size, base64: bytesToBase64(new Uint8Array(await f.arrayBuffer())) });
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (ready) send.mutate();
  };

  return (
    <form onSubmit={submit} noValidate data-testid="repair-form">
      <section className="card section" data-testid="repair-payload">
        <div className="card-head">
          <h2>Payload</h2>
          <span className="muted">{payloadKind === "json" ? "JSON" : payloadKind === "text" ? "text" : "binary"}</span>
          {props.revealed ? <span className="muted">· revealed for this page (audited)</span> : null}
        </div>
        {payloadLock ? (
          <p className="banner banner-warn" data-testid="repair-payload-locked">
            Locked: {payloadLock.message}
          </p>
        ) : initialText !== null ? (
          <>
            <label htmlFor="repair-payload-text" className="hint">
              {payloadKind === "json"
                ? "Edit the JSON. It is checked as you type and again when you preview; nothing is sent while it is not valid. The edited text is sent as you leave it (formatting included)."
                : "Edit the text; it is sent as UTF-8."}
            </label>
            <textarea
              id="repair-payload-text"
              ref={editorRef}
              className="mono"
              value={text}
              onChange={(e) => setText(e.target.value)}
              rows={Math.min(30, Math.max(8, text.split("\n").length + 1))}
              spellCheck={false}
              disabled={locked}
              style={{ width: "100%" }}
              aria-invalid={syntax ? true : undefined}
              aria-describedby={liveSyntax ? "repair-payload-syntax" : undefined}
              data-testid="repair-payload-editor"
            />
            {liveSyntax ? (
              <p
                id="repair-payload-syntax"
                className="form-error"
                aria-live="polite"
                data-testid="payload-syntax"
                data-line={liveSyntax.line}
                data-column={liveSyntax.column}
              >
                Not valid JSON at line {liveSyntax.line}, column {liveSyntax.column}: {liveSyntax.message}.{" "}
                <button
                  type="button"
                  className="btn btn-small"
                  onClick={() => caretAt(liveSyntax.line, liveSyntax.column)}
                  data-testid="payload-syntax-go"
                >
                  Go there
                </button>
              </p>
            ) : null}
          </>
        ) : (
          <>
            <p className="hint">
              {payloadKind === "binary"
                ? "This payload is binary: it cannot be edited as text. To change it, upload a file with the new payload."
                : `${props.payloadNote ?? "The page holds only part of this payload."} To change it, upload a file with the whole new payload.`}
            </p>
            <label>
              Replace with a file{" "}
              <input
                type="file"
                onChange={(e) => void onFile(e.target.files?.[0])}
                disabled={locked}
                data-testid="repair-payload-file"
              />
            </label>
            {file ? (
              <p className="muted">
                {file.name}: {file.size} bytes
              </p>
            ) : null}
          </>
        )}
        {props.maxBodyBytes ? (
          <p className="muted">This broker takes payloads of at most {props.maxBodyBytes} bytes.</p>
        ) : null}
      </section>

      <HeaderEditor rows={rows} onChange={setRows} disabled={locked} />
      <p className="muted" data-testid="repair-properties-note">
        Properties are locked: they travel unchanged, except the message id, which is new on the copy (and the
        correlation id, if you ask for a new one).
      </p>
      <EntriesTable
        title="Properties"
        entries={props.properties}
        testId="repair-properties"
        rowTestId="repair-property-row"
      />

      <fieldset className="card section">
        <legend>Target</legend>
        <label className="radio">
          <input
            type="radio"
            name="repair-target"
            checked={targetKind === "origin"}
            onChange={() => setTargetKind("origin")}
            disabled={locked}
            data-testid="repair-target-origin"
          />
          <span>
            The letter&apos;s origin{props.originQueue ? <span className="mono"> ({props.originQueue})</span> : null}
          </span>
        </label>
        <label className="radio">
          <input
            type="radio"
            name="repair-target"
            checked={targetKind === "queue"}
            onChange={() => setTargetKind("queue")}
            disabled={locked}
            data-testid="repair-target-queue"
          />
          <span>Another queue:</span>{" "}
          <input
            value={targetName}
            onChange={(e) => setTargetName(e.target.value)}
            onFocus={() => setTargetKind("queue")}
            disabled={locked}
            aria-label="Target queue name"
            data-testid="repair-target-name"
          />
        </label>
        <label className="radio">
          <input
            type="checkbox"
            checked={newCorrelationId}
            onChange={(e) => setNewCorrelationId(e.target.checked)}
            disabled={locked}
            data-testid="repair-new-correlation"
          />
          <span>
            Give the copy a new correlation id (many consumers correlate on it: leave it unless they must see a new one)
          </span>
        </label>
      </fieldset>

      <div className="toolbar">
        <button
          type="button"
          className="btn"
          onClick={() => preview.mutate()}
          disabled={busy || locked}
          data-testid="repair-preview-button"
        >
          {preview.isPending ? "Checking…" : "Preview"}
        </button>
      </div>

      {error ? (
        <p className="banner banner-error" role="alert" data-testid="repair-error">
          {error}
        </p>
      ) : null}
      {plan && plan.problems.length > 0 ? (
        <div className="banner banner-error" role="alert" data-testid="repair-problems">
          <p>
            <strong>Nothing can be sent yet:</strong>
          </p>
          <ul>
            {plan.problems.map((p, i) => (
              <li
                // biome-ignore lint/suspicious/noArrayIndexKey: each plan replaces the whole list; problems have no id and two can read alike
                key={i}
                data-testid={p.field === "payload" ? "payload-error" : "repair-problem"}
                data-line={p.line}
                data-column={p.column}
              >
                {/* The server's message names the line and column of a JSON error itself. */}
                {p.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {plan?.ok ? <RepairDiff plan={plan} /> : null}

      <fieldset className="card section">
        <legend>Why is this letter repaired?</legend>
        <label>
          <span className="hint">
            Required. Recorded with the repair in the audit log and on the archived original.
          </span>
          <textarea
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            rows={2}
            maxLength={2000}
            required
            disabled={locked}
            style={{ width: "100%" }}
            data-testid="repair-reason"
          />
        </label>
      </fieldset>

      {result ? null : (
        <section className="card redrive-confirm" aria-label="Send">
          <div className="toolbar">
            <button type="submit" className="btn btn-danger" disabled={!ready || busy} data-testid="repair-send">
              {send.isPending ? "Sending…" : "Send the repaired copy"}
            </button>
            {sendHint ? <span className="muted">{sendHint}</span> : null}
            <Link href={props.backHref} className="btn">
              Cancel
            </Link>
          </div>
        </section>
      )}
      {result ? <RepairOutcome result={result} connectionId={connectionId} queue={queue} letterId={letterId} /> : null}
    </form>
  );
}

function RepairOutcome({
  result,
  connectionId,
  queue,
  letterId,
}: {
  result: RepairResult;
  connectionId: string;
  queue: string;
  letterId: string;
}) {
  if (result.outcome === "moved") {
    return (
      <section className="banner banner-info" role="status" data-testid="repair-result" data-outcome="moved">
        <p>
          <strong>Sent.</strong> The repaired copy is at{" "}
          <span className="mono">{result.destination ?? "its target"}</span>
          {result.copyId ? (
            <>
              {" "}
              with id{" "}
              <span className="mono" data-testid="repair-copy-id">
                {result.copyId}
              </span>
            </>
          ) : null}
          . The original was archived, then removed from <span className="mono">{queue}</span>.
        </p>
        <p>
          {result.copyLetterId ? (
            <>
              <Link href={letterHref(connectionId, queue, result.copyLetterId)} data-testid="repair-copy-link">
                The resubmitted message
              </Link>{" "}
              <span className="muted">
                (its page here says where it went, and shows it if it fails again and comes back)
              </span>
              {" · "}
            </>
          ) : null}
          <Link
            href={archivedOriginalHref(result.operationId, { connectionId, queue, id: letterId })}
            data-testid="repair-archive-link"
          >
            The archived original
          </Link>{" "}
          <span className="muted">(operation {result.operationId})</span>
        </p>
      </section>
    );
  }
  return (
    <section className="banner banner-error" role="alert" data-testid="repair-result" data-outcome={result.outcome}>
      <p>
        <strong>Not sent ({result.outcome}).</strong> {result.reason}
      </p>
      <p>The original is still in the DLQ, unchanged. Operation {result.operationId} is on record.</p>
    </section>
  );
}
