import { describe, expect, it } from 'vitest';
import { formatReport, reportRows, soakJudgeOptions } from './report.js';
import { TIMELINE_FULLEST } from './sampler.js';

const windows = [
  { fromMin: 0, toMin: 1 },
  { fromMin: 1, toMin: 2 },
  { fromMin: 2, toMin: 3 },
];
const series = (...values: number[]) => values.map((value, i) => ({ atMin: i + 0.5, value }));

describe('reportRows', () => {
  it('judges daemons and the keys outside the filling sections by growth, small and filling sections not at all', () => {
    const rows = reportRows(
      new Map([
        ['master a heap', series(10e6, 30e6, 36e6)],
        ['etcd keys total', series(100, 1000, 1400)],
        ['etcd keys total, less timeline and audit', series(100, 900, 1000)],
        ['etcd keys masters', series(1, 2, 4)],
        ['etcd keys timeline', series(10, 100, 400)],
      ]),
      windows,
    );
    expect(rows.map((r) => [r.name, r.judged, r.verdict.pass])).toEqual([
      ['master a heap', true, false],
      ['etcd keys total', false, false],
      ['etcd keys total, less timeline and audit', true, true],
      ['etcd keys masters', false, false],
      ['etcd keys timeline', false, false],
    ]);
  });

  it('holds a bounded series to its bound, not to its growth, and leaves out what it is told to', () => {
    const rows = reportRows(
      new Map([
        ['etcd keys audit', series(10, 100, 400)],
        ['master a rss', series(1, 1, 9)],
      ]),
      windows,
      { bounds: { 'etcd keys audit': 400 }, unjudged: (n) => n.endsWith(' rss') },
    );
    expect(rows.map((r) => [r.name, r.judged, r.verdict.pass])).toEqual([
      ['master a rss', false, false],
      ['etcd keys audit', true, true],
    ]);
    expect(formatReport(rows)).toContain('| etcd keys audit | 10 | 100 | 400 | ×4.00 | pass (≤ 400) |');
  });
});

describe('soakJudgeOptions', () => {
  it('judges growth against the limit it is given, and holds the timeline and the audit trail to their bounds', () => {
    const grown = new Map([['master a heap', series(30e6, 30e6, 34.5e6)]]);
    expect(reportRows(grown, windows, soakJudgeOptions(2, false))[0]!.verdict.pass).toBe(true);
    expect(reportRows(grown, windows, soakJudgeOptions(2, false, 1.1))[0]!.verdict.pass).toBe(false);
    // 10 events per pair (the soak's TASK_TIMELINE_LIMIT) plus nine per master between trims.
    expect(soakJudgeOptions(2, false).bounds).toEqual({ [TIMELINE_FULLEST]: 28, 'etcd keys audit': 10000 });
    expect(soakJudgeOptions(2, true).unjudged?.('master a rss')).toBe(true);
    expect(soakJudgeOptions(2, false).unjudged?.('master a rss')).toBe(false);
  });
});
