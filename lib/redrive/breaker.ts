/**
 * The circuit breaker's arithmetic: of the letters this job redrove in its sliding window (the
 * last `window` letters moved, since the breaker was last reset), how many came back to the DLQ.
 * It trips when that share exceeds the threshold, once the window holds at least `minLetters`
 * (so two early returns out of three do not stop a 100,000-letter job).
 */
export interface BreakerConfig {
  /** 0..1, e.g. 0.1 for 10 %. */
  threshold: number;
  window: number;
  minLetters: number;
}

export interface BreakerWindow {
  /** Letters moved in the window (returned ones included: they were moved first). */
  redriven: number;
  returned: number;
}

export interface BreakerVerdict {
  trip: boolean;
  share: number;
  /** Operator words; set when it trips. */
  reason: string | null;
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

export function breakerVerdict(w: BreakerWindow, cfg: BreakerConfig): BreakerVerdict {
  const share = w.redriven > 0 ? w.returned / w.redriven : 0;
  const trip = w.redriven >= cfg.minLetters && share > cfg.threshold;
  return {
    trip,
    share,
    reason: trip
      ? `Paused by the circuit breaker: ${w.returned} of the last ${w.redriven} redriven letters (${pct(share)}) came back to the DLQ, above the ${pct(cfg.threshold)} limit. The consumer is still failing: check it before resuming.`
      : null,
  };
}
