import { SOAK_MASTER_ENV } from './fleet.js';
import { GROWTH_LIMIT } from './options.js';
import { ETCD_KEYS_HELD, FILLING_SECTIONS, type Series, TIMELINE_FULLEST } from './sampler.js';
import { type Verdict, type WindowFigure, judge, windowMedians } from './windows.js';

/** A series in the report: its windows and, when it is a goal, its verdict. */
export interface ReportRow {
  readonly name: string;
  readonly windows: readonly WindowFigure[];
  readonly verdict: Verdict;
  /** Whether the verdict counts toward the run's result. */
  readonly judged: boolean;
  /** The bound every sample must stay within, for a series judged by its bound. */
  readonly bound?: number;
}

/**
 * A section of etcd is judged once it holds this many keys: smaller ones (masters, locks, a
 * queue between sweeps) swing by whole multiples from one sample to the next without growing.
 */
export const JUDGED_SECTION_KEYS = 100;

/** How the rows are judged beyond growth. */
export interface JudgeOptions {
  /**
   * Series held to a bound rather than to growth: a section that fills toward its bound by design
   * (the timeline's pairs, the audit trail) passes while every sample is within it.
   */
  readonly bounds?: Readonly<Record<string, number>>;
  /** Series shown but not judged (RSS after a heap snapshot, which leaves it at the snapshot's peak). */
  readonly unjudged?: (name: string) => boolean;
  /** The growth a judged series may show, last window against the first ({@link GROWTH_LIMIT}). */
  readonly limit?: number;
}

/**
 * How a soak of `masters` masters is judged: the timeline's fullest pair at most the limit plus
 * nine events per master between trims (docs/ARCHITECTURE.md §2.7), the audit trail its
 * `AUDIT_LIMIT`; with heap snapshots, RSS shown and not judged (a snapshot leaves a process's RSS
 * at the snapshot's peak, not the daemon's own).
 */
export function soakJudgeOptions(masters: number, heapSnapshots: boolean, limit = GROWTH_LIMIT): JudgeOptions {
  return {
    bounds: {
      [TIMELINE_FULLEST]: Number(SOAK_MASTER_ENV.TASK_TIMELINE_LIMIT) + 9 * masters,
      'etcd keys audit': Number(SOAK_MASTER_ENV.AUDIT_LIMIT),
    },
    unjudged: (name) => heapSnapshots && name.endsWith(' rss'),
    limit,
  };
}

const isJudged = (name: string, windows: readonly WindowFigure[]): boolean => {
  if (name === 'etcd keys total') return false;
  if (!name.startsWith('etcd keys ') || name === ETCD_KEYS_HELD) return true;
  if (FILLING_SECTIONS.some((section) => name === `etcd keys ${section}`)) return false;
  return (windows[1]?.median ?? 0) >= JUDGED_SECTION_KEYS;
};

/** The rows of the report: daemons first (heap, RSS), then etcd's total and sections. */
export function reportRows(
  series: Series,
  windowBounds: readonly { fromMin: number; toMin: number }[],
  o: JudgeOptions = {},
): ReportRow[] {
  const names = [...series.keys()].sort((x, y) => {
    const rank = (n: string): number => (n.startsWith('etcd keys total') ? 1 : n.startsWith('etcd') ? 2 : 0);
    return rank(x) - rank(y) || x.localeCompare(y);
  });
  return names.map((name) => {
    const samples = series.get(name) ?? [];
    const windows = windowMedians(samples, windowBounds);
    const bound = o.bounds?.[name];
    const grown = judge(windows, o.limit);
    if (bound !== undefined) {
      return {
        name,
        windows,
        verdict: { ...grown, pass: samples.every((s) => s.value <= bound) },
        judged: true,
        bound,
      };
    }
    return { name, windows, verdict: grown, judged: !o.unjudged?.(name) && isJudged(name, windows) };
  });
}

const fmt = (name: string, v: number | undefined): string => {
  if (v === undefined) return '–';
  if (name.endsWith(' heap') || name.endsWith(' rss')) return `${(v / 1024 / 1024).toFixed(1)} MB`;
  return String(Math.round(v));
};

const minutes = (m: number): string => (Number.isInteger(m) ? String(m) : m.toFixed(1));

/** The report as a Markdown table (one column per window, the first being warm-up) and verdicts. */
export function formatReport(rows: readonly ReportRow[]): string {
  const first = rows[0];
  if (!first) return '(no samples)';
  const heads = first.windows.map(
    (w, i) => `${i === 0 ? 'warm-up ' : ''}${minutes(w.fromMin)}–${minutes(w.toMin)} min`,
  );
  const lines = [
    `| series | ${heads.join(' | ')} | first → last | verdict |`,
    `| --- | ${heads.map(() => '---:').join(' | ')} | ---: | --- |`,
  ];
  for (const r of rows) {
    const ratio = r.verdict.ratio === undefined ? '–' : `×${r.verdict.ratio.toFixed(2)}`;
    const verdict = `${r.judged ? (r.verdict.pass ? 'pass' : 'FAIL') : 'shown'}${r.bound === undefined ? '' : ` (≤ ${r.bound})`}`;
    lines.push(`| ${r.name} | ${r.windows.map((w) => fmt(r.name, w.median)).join(' | ')} | ${ratio} | ${verdict} |`);
  }
  return lines.join('\n');
}
