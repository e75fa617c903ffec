import { describe, expect, it } from 'vitest';
import { logLimiter } from './log-limit.js';

describe('logLimiter', () => {
  it('lets a key through once per period, each key on its own', () => {
    const allow = logLimiter({ everyMs: 60_000, maxKeys: 10 });
    expect(allow('10.0.0.1', 0)).toBe(true);
    expect(allow('10.0.0.1', 59_999)).toBe(false);
    expect(allow('10.0.0.2', 59_999)).toBe(true);
    expect(allow('10.0.0.1', 60_000)).toBe(true);
  });

  it('remembers at most maxKeys keys within one period, forgetting the longest remembered first', () => {
    const allow = logLimiter({ everyMs: 60_000, maxKeys: 3 });
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) expect(allow(key, i)).toBe(true);
    // 'a' was forgotten to make room for 'd'; 'b', 'c' and 'd' are still held back.
    expect(['b', 'c', 'd'].map((k) => allow(k, 10))).toEqual([false, false, false]);
    expect(allow('a', 10)).toBe(true);
    // Remembering 'a' again forgot 'b', the longest remembered.
    expect(allow('b', 11)).toBe(true);
  });

  it('lets every key whose period has passed through again, however many there are', () => {
    const allow = logLimiter({ everyMs: 1000, maxKeys: 1_000_000 });
    for (let i = 0; i < 5000; i++) allow(`client-${i}`, i);
    // At 5,500 ms only the clients of the last second (4,501 to 4,999 ms) are held back.
    const held = Array.from({ length: 5000 }, (_, i) => !allow(`client-${i}`, 5500)).filter(Boolean).length;
    expect(held).toBe(499);
  });
});
