import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type TaskCooldown } from './model.js';
import {
  type CooldownPolicy,
  DEFAULT_COOLDOWN_POLICY,
  cooldownWindowMs,
  isCooling,
  jitterHash,
  nextCooldown,
  sanitizeError,
} from './cooldown-policy.js';

/** Kinds the properties draw from: core names none, so these are the shipped registry's. */
const TASK_KINDS = ['merge_wal', 'compact', 'index_id'] as const;
const kind = fc.constantFrom(...TASK_KINDS);
const target = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,40}$/);
const policyArb: fc.Arbitrary<CooldownPolicy> = fc.record({
  afterFailures: fc.integer({ min: 1, max: 10 }),
  baseSecs: fc.integer({ min: 1, max: 7200 }),
  maxSecs: fc.integer({ min: 1, max: 86400 * 7 }),
  jitter: fc.double({ min: 0, max: 0.99, noNaN: true }),
  kinds: fc.constant(TASK_KINDS),
  maxPercent: fc.integer({ min: 0, max: 100 }),
  countInfrastructure: fc.boolean(),
});

describe('cooldown window', () => {
  it('follows the defaults: none below 3, then ~600 s, ~1200 s, ~2400 s, capped at 21600 s', () => {
    const w = (f: number): number => cooldownWindowMs(DEFAULT_COOLDOWN_POLICY, 'compact', 'store', f);
    expect([w(1), w(2)]).toEqual([0, 0]);
    for (const [f, secs] of [
      [3, 600],
      [4, 1200],
      [5, 2400],
      [12, 21600],
      [500, 21600],
    ] as const) {
      expect(w(f)).toBeGreaterThan(secs * 1000 * 0.9 - 1);
      expect(w(f)).toBeLessThanOrEqual(secs * 1000);
    }
  });

  it('is zero below the threshold, and everywhere when disabled', () => {
    fc.assert(
      fc.property(policyArb, kind, target, fc.integer({ min: 0, max: 1000 }), (p, k, t, f) => {
        if (f < p.afterFailures) expect(cooldownWindowMs(p, k, t, f)).toBe(0);
        expect(cooldownWindowMs({ ...p, afterFailures: 0 }, k, t, f)).toBe(0);
      }),
    );
  });

  it('never exceeds max, even with jitter, and is positive from the threshold on', () => {
    fc.assert(
      fc.property(policyArb, kind, target, fc.integer({ min: 0, max: 10_000 }), (p, k, t, extra) => {
        const w = cooldownWindowMs(p, k, t, p.afterFailures + extra);
        expect(w).toBeLessThanOrEqual(p.maxSecs * 1000);
        expect(w).toBeGreaterThan(0);
      }),
    );
  });

  it('is monotone in failures when jitter is off', () => {
    fc.assert(
      fc.property(policyArb, kind, target, fc.integer({ min: 0, max: 200 }), (p, k, t, f) => {
        const q = { ...p, jitter: 0 };
        expect(cooldownWindowMs(q, k, t, f + 1)).toBeGreaterThanOrEqual(cooldownWindowMs(q, k, t, f));
      }),
    );
  });

  it('is monotone in failures with jitter wherever the doubling outruns it (below the cap)', () => {
    // Jitter only shortens a window by up to `jitter` of it; a doubled window shortened by less
    // than half still exceeds the undoubled one, so growth holds while 2·(1−j) ≥ 1 and under the cap.
    fc.assert(
      fc.property(policyArb, kind, target, fc.integer({ min: 0, max: 30 }), (p, k, t, over) => {
        const q = { ...p, jitter: Math.min(p.jitter, 0.5) };
        const f = q.afterFailures + over;
        if (q.baseSecs * 2 ** (over + 1) > q.maxSecs) return;
        expect(cooldownWindowMs(q, k, t, f + 1)).toBeGreaterThanOrEqual(cooldownWindowMs(q, k, t, f));
      }),
    );
  });

  it('is identical for identical (kind, target, failures), so every master computes the same until_ms', () => {
    fc.assert(
      fc.property(policyArb, kind, target, fc.integer({ min: 0, max: 100 }), (p, k, t, f) => {
        expect(cooldownWindowMs(p, k, t, f)).toBe(cooldownWindowMs({ ...p }, k, `${t}`, f));
        const h = jitterHash(k, t, f);
        expect(h).toBeGreaterThanOrEqual(0);
        expect(h).toBeLessThan(1);
      }),
    );
  });

  it('spreads jitter across targets rather than giving every target the same window', () => {
    const windows = new Set(
      Array.from({ length: 50 }, (_, i) => cooldownWindowMs(DEFAULT_COOLDOWN_POLICY, 'compact', `s${i}`, 3)),
    );
    expect(windows.size).toBeGreaterThan(40);
  });
});

describe('nextCooldown', () => {
  const failure = {
    kind: 'compact' as const,
    target: 'store',
    taskId: 't1',
    error: 'boom',
    errorClass: 'target' as const,
  };

  it('counts consecutive failures and sets until_ms only from the threshold on', () => {
    const p = { ...DEFAULT_COOLDOWN_POLICY, afterFailures: 2, jitter: 0 };
    const first = nextCooldown(p, undefined, failure, 1000);
    expect(first).toMatchObject({
      action: 'write',
      cooling: false,
      record: { failures: 1, until_ms: null, first_failure_ms: 1000 },
    });
    const prev = (first as { record: TaskCooldown }).record;
    const second = nextCooldown(p, prev, { ...failure, taskId: 't2' }, 5000);
    expect(second).toMatchObject({
      action: 'write',
      cooling: true,
      windowMs: 600_000,
      record: { failures: 2, until_ms: 605_000, first_failure_ms: 1000, last_failure_ms: 5000, last_task_id: 't2' },
    });
  });

  it('is a no-op for a task id it already counted', () => {
    const p = DEFAULT_COOLDOWN_POLICY;
    const r = nextCooldown(p, undefined, failure, 0);
    const prev = (r as { record: TaskCooldown }).record;
    expect(nextCooldown(p, prev, failure, 10)).toEqual({ action: 'duplicate', record: prev });
  });

  it('holds a window back while more than maxPercent of the fleet cools, keeping the count', () => {
    const p = { ...DEFAULT_COOLDOWN_POLICY, afterFailures: 1, maxPercent: 25 };
    expect(nextCooldown(p, undefined, failure, 0, { knownStores: 8, coolingOthers: 2 })).toMatchObject({
      cooling: true,
    });
    expect(nextCooldown(p, undefined, failure, 0, { knownStores: 8, coolingOthers: 3 })).toMatchObject({
      cooling: false,
      guardOverflow: true,
      record: { failures: 1, until_ms: null },
    });
    // Without a known fleet size there is nothing to compare against: the guard stays open.
    expect(nextCooldown(p, undefined, failure, 0, { knownStores: 0, coolingOthers: 50 })).toMatchObject({
      cooling: true,
    });
  });

  it('ignores disabled policies, other kinds and (by default) infrastructure failures', () => {
    const p = DEFAULT_COOLDOWN_POLICY;
    expect(nextCooldown({ ...p, afterFailures: 0 }, undefined, failure, 0)).toEqual({
      action: 'ignore',
      reason: 'disabled',
    });
    expect(nextCooldown({ ...p, kinds: ['merge_wal'] }, undefined, failure, 0)).toEqual({
      action: 'ignore',
      reason: 'kind',
    });
    expect(nextCooldown(p, undefined, { ...failure, errorClass: 'infrastructure' }, 0)).toEqual({
      action: 'ignore',
      reason: 'class',
    });
    expect(
      nextCooldown({ ...p, countInfrastructure: true }, undefined, { ...failure, errorClass: 'infrastructure' }, 0),
    ).toMatchObject({
      action: 'write',
    });
  });
});

describe('isCooling', () => {
  it('is true only for a set, future until_ms', () => {
    const base = {
      kind: 'compact',
      target: 's',
      failures: 3,
      last_error: '',
      last_error_class: 'target',
      first_failure_ms: 0,
      last_failure_ms: 0,
      last_task_id: 't',
    } as const;
    expect(isCooling(undefined, 0)).toBe(false);
    expect(isCooling({ ...base, until_ms: null }, 0)).toBe(false);
    expect(isCooling({ ...base, until_ms: 100 }, 99)).toBe(true);
    expect(isCooling({ ...base, until_ms: 100 }, 100)).toBe(false);
  });
});

describe('sanitizeError', () => {
  it('removes escape sequences and control characters and bounds the length', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 2000 }), (s) => {
        const out = sanitizeError(s);
        // eslint-disable-next-line no-control-regex -- asserting none survived
        expect(out).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
        expect([...out].length).toBeLessThanOrEqual(512);
      }),
    );
    expect(sanitizeError('\u001b]0;pwned\u0007title \u001b[2Jcleared')).toBe('title cleared');
  });

  it('drops bidirectional controls and an unterminated control string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 500 }), (s) => {
        expect(sanitizeError(s)).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
      }),
    );
    expect(sanitizeError('store-1\u202e1-erots')).toBe('store-11-erots');
    expect(sanitizeError('failed \u001b]8;;http://evil.example/ link text')).toBe('failed');
  });

  // The output pinned case by case, so that it cannot follow a runtime's own function: Node 24
  // changed util.stripVTControlCharacters, and masters on two Node lines stored one error as two texts.
  it.each([
    ['boom\u001b[2J\u0007!', 'boom!'],
    ['\u001b[31mred\u001b[0m text', 'red text'],
    ['\u001b[1;31;42mbold\u001b[m', 'bold'],
    ['\u009b31mC1 CSI\u009b0m', 'C1 CSI'],
    ['\u001b]0;title\u0007after BEL', 'after BEL'],
    ['\u001b]8;;http://x.example/\u001b\\link\u001b]8;;\u001b\\ after ST', 'link after ST'],
    ['\u001bP1$r0m\u001b\\DCS gone', 'DCS gone'],
    ['\u0090DCS C1\u009cafter', 'after'],
    ['\u001b]0;unterminated title', ''],
    ['tab\there\nnewline\r\nCRLF', 'tab here newline CRLF'],
    ['bell\u0007inside', 'bell inside'],
    ['store-1\u202e1-erots', 'store-11-erots'],
    ['a\u2066isolate\u2069b\u200fmark', 'aisolatebmark'],
    ['del\u007fchar and \u0085 NEL', 'del char and NEL'],
    ['  spaced   out  ', 'spaced out'],
    ['\u001b[?25l\u001b[Hcursor', 'cursor'],
    ['\u001b(Bcharset', 'charset'],
    ['\u001b7save\u001b8restore', 'aveestore'],
  ])('gives one text on every Node line: %j becomes %j', (input, output) => {
    expect(sanitizeError(input)).toBe(output);
  });
});
