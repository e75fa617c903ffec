import { describe, expect, it } from 'vitest';
import { sanitizeDeep, sanitizeText } from './sanitize.js';

describe('sanitizeText', () => {
  it('removes CSI, OSC and other escape sequences', () => {
    expect(sanitizeText('\u001b[2J\u001b[31mred\u001b[0m')).toBe('red');
    expect(sanitizeText('a\u001b]0;pwned title\u0007b')).toBe('ab');
    expect(sanitizeText('x\u001b]8;;http://evil\u001b\\link\u001b]8;;\u001b\\y')).toBe('xlinky');
  });

  it('turns stray control characters (C0, DEL, C1) into spaces', () => {
    expect(sanitizeText('a\rb\nc\td\u0007e\u007ff\u0085g\u001b')).toBe('a b c d e f g');
  });

  it('drops bidirectional overrides that would reorder the text on screen', () => {
    expect(sanitizeText('abc\u202edcba\u2066x')).toBe('abcdcbax');
  });

  it('leaves ordinary text, paths and Unicode alone', () => {
    expect(sanitizeText('Not found: .../data/x.lance — ünïcode')).toBe('Not found: .../data/x.lance — ünïcode');
  });

  it('keeps text longer than a cooldown’s 512-character bound whole (a task’s error may hold 2048)', () => {
    const long = `${'x'.repeat(1500)} — ${'é'.repeat(500)}`;
    expect(sanitizeText(long)).toBe(long);
    expect(sanitizeText(`${long}\u001b[2J`)).toBe(long);
  });

  it('trims and folds spaces in plain ASCII text too', () => {
    expect(sanitizeText('  a  b ')).toBe('a b');
    expect(sanitizeText('')).toBe('');
  });
});

describe('sanitizeDeep', () => {
  it('cleans every string in nested JSON and keeps other values', () => {
    expect(sanitizeDeep({ a: ['\u001b[1mx', 1, null], b: { c: 'y\u0007', d: true } })).toEqual({
      a: ['x', 1, null],
      b: { c: 'y', d: true },
    });
  });

  it('returns the same objects when nothing needed cleaning, and copies only what did', () => {
    const page = {
      stores: [
        { name: 'a', owners: ['http://w1'] },
        { name: 'b\u001b[2J', owners: [] },
      ],
      total: 2,
    };
    const out = sanitizeDeep(page);
    expect(out).not.toBe(page);
    expect(out.stores[0]).toBe(page.stores[0]);
    expect(out.stores[1]).toEqual({ name: 'b', owners: [] });
    const clean = { stores: [{ name: 'a' }], total: 1 };
    expect(sanitizeDeep(clean)).toBe(clean);
  });
});
