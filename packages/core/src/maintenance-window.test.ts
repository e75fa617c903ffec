import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type MaintenanceWindow,
  isWindowOpen,
  openKinds,
  parseTaskWindows,
  windowState,
} from './maintenance-window.js';

function parsed(text: string, tz = 'UTC'): readonly MaintenanceWindow[] {
  const r = parseTaskWindows(text, tz);
  if (!r.ok) throw new Error(r.error);
  return r.windows;
}
const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

describe('TASK_WINDOWS', () => {
  it('parses one entry per kind, several ranges each', () => {
    const ws = parsed('compact=22:00-05:00,index_id=22:00-05:00;12:00-13:00');
    expect(ws.map((w) => [w.kind, w.spec])).toEqual([
      ['compact', '22:00-05:00'],
      ['index_id', '22:00-05:00;12:00-13:00'],
    ]);
    expect(ws[1]?.ranges).toEqual([
      { from: 1320, to: 300 },
      { from: 720, to: 780 },
    ]);
    expect(parsed('')).toEqual([]);
  });

  it.each([
    ['compact', 'expected kind=HH:MM-HH:MM'],
    ['compact=22:00', 'expected HH:MM-HH:MM'],
    ['compact=25:00-05:00', 'expected HH:MM-HH:MM'],
    ['compact=22:60-05:00', 'expected HH:MM-HH:MM'],
    ['compact=10:00-10:00', 'is empty'],
    ['Compact=10:00-11:00', 'expected kind='],
    ['compact=10:00-11:00,compact=12:00-13:00', 'two entries'],
  ])('refuses %s, saying why', (text, why) => {
    const r = parseTaskWindows(text, 'UTC');
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.error).toContain(why);
  });

  it('refuses a zone that is not an IANA name', () => {
    const r = parseTaskWindows('compact=22:00-05:00', 'Mars/Olympus');
    expect(r.ok ? '' : r.error).toContain('unknown time zone "Mars/Olympus"');
  });
});

describe('a maintenance window at an instant', () => {
  const [night] = parsed('compact=22:00-05:00');

  it('is closed before its range and says when it opens', () => {
    expect(windowState(night!, at('2026-12-06T20:47:12Z'))).toEqual({
      open: false,
      nextChangeMs: at('2026-12-06T22:00:00Z'),
    });
  });

  it('spans midnight and closes the next morning', () => {
    const s = windowState(night!, at('2026-12-06T23:10:00Z'));
    expect(s.open).toBe(true);
    expect(iso(s.nextChangeMs)).toBe('2026-12-07T05:00:00.000Z');
    expect(isWindowOpen(night!, at('2026-12-07T04:59:59Z'))).toBe(true);
    expect(isWindowOpen(night!, at('2026-12-07T05:00:00Z'))).toBe(false);
  });

  it('follows local time in its zone, across a change to summer time', () => {
    const [berlin] = parsed('compact=22:00-05:00', 'Europe/Berlin');
    // 21:30 UTC in December is 22:30 in Berlin: open until 05:00 local, 04:00 UTC.
    expect(windowState(berlin!, at('2026-12-06T21:30:00Z'))).toEqual({
      open: true,
      nextChangeMs: at('2026-12-07T04:00:00Z'),
    });
    // The night of 28 March 2027 Berlin moves from UTC+1 to UTC+2: 05:00 local is 03:00 UTC.
    expect(iso(windowState(berlin!, at('2027-03-27T22:00:00Z')).nextChangeMs)).toBe('2027-03-28T03:00:00.000Z');
    // A range in the hour that the change skips is not open that day; it opens the next.
    const [skipped] = parsed('compact=02:00-02:30', 'Europe/Berlin');
    expect(windowState(skipped!, at('2027-03-28T00:00:00Z'))).toEqual({
      open: false,
      nextChangeMs: at('2027-03-29T00:00:00Z'),
    });
  });

  it('never changes when it covers the whole day', () => {
    const [all] = parsed('compact=00:00-24:00');
    expect(windowState(all!, at('2026-12-06T12:00:00Z'))).toEqual({ open: true, nextChangeMs: null });
  });

  it('names its next change as the first minute whose state differs', () => {
    const [w] = parsed('index_id=22:00-05:00;12:00-13:00', 'America/New_York');
    fc.assert(
      fc.property(fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2028-01-01T00:00:00Z') }), (now) => {
        const { open, nextChangeMs } = windowState(w!, now);
        expect(nextChangeMs).not.toBeNull();
        expect(isWindowOpen(w!, nextChangeMs!)).toBe(!open);
        // No change before it: every minute from now up to it keeps the state of now.
        for (let t = Math.ceil(now / 60_000) * 60_000; t < nextChangeMs!; t += 60_000) {
          expect(isWindowOpen(w!, t)).toBe(open);
        }
        expect(nextChangeMs! % 60_000).toBe(0);
      }),
      { numRuns: 50 },
    );
  });

  it('leaves a kind without a window open at any hour', () => {
    const ws = parsed('compact=22:00-05:00');
    expect(openKinds(ws, ['merge_wal', 'compact'], at('2026-12-06T12:00:00Z'))).toEqual(['merge_wal']);
    expect(openKinds(ws, ['merge_wal', 'compact'], at('2026-12-06T23:00:00Z'))).toEqual(['merge_wal', 'compact']);
  });
});
