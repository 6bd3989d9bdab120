"use client";

import { useState } from "react";
import { formatCount } from "@/lib/format";
import { formatDuration, parseSample, sampleLetters } from "@/lib/redrive/ui-format";

/**
 * The part every redrive form shares (the redrive form, the group repair form): the fix it follows
 * and its two stages (sample, watch, the rest at a rate), with the checks and the words that name
 * what stage 1 and stage 2 will do. One place, so both forms ask and check the same.
 */
export function useStageFields(count: number) {
  const [fix, setFix] = useState("");
  const [sampleText, setSampleText] = useState("5");
  const [watch, setWatch] = useState("120");
  const [rate, setRate] = useState("50");
  const sample = parseSample(sampleText);
  const watchSeconds = Number(watch);
  const ratePerSecond = Number(rate);
  const problems: string[] = [];
  if (fix.trim().length < 3) problems.push("State which fix this redrive follows.");
  if (!sample) problems.push("Sample: a number of letters (5) or a percentage (10%).");
  if (!Number.isInteger(watchSeconds) || watchSeconds < 1 || watchSeconds > 3600)
    problems.push("Watch time: 1 to 3,600 seconds.");
  if (!(ratePerSecond > 0 && ratePerSecond <= 10_000))
    problems.push("Rate: more than 0 and at most 10,000 letters per second.");
  const k = sample && count > 0 ? sampleLetters(sample, count) : null;
  return {
    fix,
    setFix,
    sampleText,
    setSampleText,
    watch,
    setWatch,
    rateText: rate,
    setRate,
    sample,
    watchSeconds,
    rate: ratePerSecond,
    problems,
    k,
    count,
  } as const;
}

export type StageFields = ReturnType<typeof useStageFields>;

/** The fix and stages fieldsets; `testIdPrefix` keeps each form's test ids ("redrive", "group-repair"). */
export function FixAndStages({
  s,
  testIdPrefix,
  stage1Verb,
  stage2Verb,
  placeholder,
}: {
  s: StageFields;
  testIdPrefix: string;
  stage1Verb: string;
  stage2Verb: string;
  placeholder: string;
}) {
  const { k, count } = s;
  const secondsForRest = k !== null && s.rate > 0 ? (count - k) / s.rate : null;
  return (
    <>
      <fieldset className="card">
        <legend>Which fix does this redrive follow?</legend>
        <label>
          <span className="hint">
            Free text, recorded with the redrive and in the audit log: a deploy, a ticket, a config change.
          </span>
          <textarea
            value={s.fix}
            onChange={(e) => s.setFix(e.target.value)}
            rows={2}
            maxLength={2000}
            required
            placeholder={placeholder}
            data-testid={`${testIdPrefix}-fix`}
          />
        </label>
      </fieldset>

      <fieldset className="card">
        <legend>Stages</legend>
        <div className="form-row">
          <label>
            Sample (letters, or %)
            <input
              value={s.sampleText}
              onChange={(e) => s.setSampleText(e.target.value)}
              style={{ width: 90 }}
              data-testid={`${testIdPrefix}-sample`}
            />
          </label>
          <label>
            Watch for (seconds)
            <input
              type="number"
              min={1}
              max={3600}
              value={s.watch}
              onChange={(e) => s.setWatch(e.target.value)}
              style={{ width: 110 }}
              data-testid={`${testIdPrefix}-watch`}
            />
          </label>
          <label>
            Then the rest at (letters/s)
            <input
              type="number"
              min={0.1}
              step="any"
              value={s.rateText}
              onChange={(e) => s.setRate(e.target.value)}
              style={{ width: 130 }}
              data-testid={`${testIdPrefix}-rate`}
            />
          </label>
        </div>
        <p className="hint" data-testid={`${testIdPrefix}-stage-summary`}>
          {k !== null ? (
            <>
              Stage 1 {stage1Verb} {formatCount(k)} of {formatCount(count)} and watches{" "}
              {Number.isFinite(s.watchSeconds) ? formatDuration(s.watchSeconds) : "—"} for any to come back. Stage 2
              (you start it after the verdict: a clean one, or with a reason) {stage2Verb} the other{" "}
              {formatCount(count - k)}
              {secondsForRest !== null ? (
                <>
                  {" "}
                  at {formatCount(s.rate)}/s, about {formatDuration(secondsForRest)}
                </>
              ) : null}
              .
            </>
          ) : (
            "Enter a sample size."
          )}
        </p>
      </fieldset>
    </>
  );
}
