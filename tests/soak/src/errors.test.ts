import { describe, expect, it } from 'vitest';
import { ErrorLog } from './errors.js';

describe('ErrorLog', () => {
  it('counts errors per source and keeps the first three of each with their time', () => {
    let t = Date.parse('2026-12-06T12:22:05Z');
    const log = new ErrorLog(() => new Date((t += 1000)));
    for (let i = 0; i < 4; i++) log.record('dashboard feed', `HTTP 503 #${i}`);
    log.record('master a log', 'boom');
    expect(log.total).toBe(5);
    expect(log.lines()).toEqual([
      'dashboard feed: 4 (12:22:06 HTTP 503 #0 | 12:22:07 HTTP 503 #1 | 12:22:08 HTTP 503 #2)',
      'master a log: 1 (12:22:09 boom)',
    ]);
  });
});
