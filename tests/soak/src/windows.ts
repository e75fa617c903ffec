import { GROWTH_LIMIT } from './options.js';

/** One sampled figure (a process's heap after collection, its RSS, a key count) at a time. */
export interface Sample {
  /** Minutes since the run started. */
  readonly atMin: number;
  readonly value: number;
}

/** A series' median over one window of the run. */
export interface WindowFigure {
  /** Start of the window, minutes since the run started. */
  readonly fromMin: number;
  readonly toMin: number;
  /** The window's median sample, undefined when it has none. */
  readonly median: number | undefined;
  readonly samples: number;
}

/** A series judged: first window after warm-up against the last. */
export interface Verdict {
  readonly first: number | undefined;
  readonly last: number | undefined;
  /** last / first; undefined without both. */
  readonly ratio: number | undefined;
  readonly pass: boolean;
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The windows of a run after warm-up: `windowMinutes` each from `warmupMinutes` on, the last one
 * ending with the run (a remainder shorter than half a window joins the window before it).
 */
export function windowBounds(
  minutes: number,
  warmupMinutes: number,
  windowMinutes: number,
): { fromMin: number; toMin: number }[] {
  const out: { fromMin: number; toMin: number }[] = [{ fromMin: 0, toMin: warmupMinutes }];
  for (let from = warmupMinutes; from < minutes - 1e-9; from += windowMinutes) {
    const to = Math.min(minutes, from + windowMinutes);
    if (to - from < windowMinutes / 2 && out.length > 1) out[out.length - 1] = { ...out[out.length - 1]!, toMin: to };
    else out.push({ fromMin: from, toMin: to });
  }
  return out;
}

/** The median of `samples` in each window (a sample belongs to the window its time falls in). */
export function windowMedians(
  samples: readonly Sample[],
  bounds: readonly { fromMin: number; toMin: number }[],
): WindowFigure[] {
  return bounds.map((b, i) => {
    const last = i === bounds.length - 1;
    const inside = samples.filter((s) => s.atMin >= b.fromMin && (s.atMin < b.toMin || (last && s.atMin <= b.toMin)));
    return { ...b, median: median(inside.map((s) => s.value)), samples: inside.length };
  });
}

/**
 * Judges a series by its windows after warm-up (the first of `windows` is warm-up): the last
 * window's median at most `limit` ({@link GROWTH_LIMIT} unless said) times the first's. A series that is 0 throughout
 * (an empty section) passes.
 */
export function judge(windows: readonly WindowFigure[], limit = GROWTH_LIMIT): Verdict {
  const judged = windows.slice(1);
  const first = judged[0]?.median;
  const last = judged[judged.length - 1]?.median;
  if (first === undefined || last === undefined) return { first, last, ratio: undefined, pass: false };
  if (first === 0) return { first, last, ratio: last === 0 ? 1 : undefined, pass: last === 0 };
  const ratio = last / first;
  return { first, last, ratio, pass: ratio <= limit };
}
