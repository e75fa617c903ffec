import { FakeClock, OUTAGE_REMINDER_MS, StoreFullError, StoreUnavailableError } from '@maintd/core';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createStoreOutageLog } from './store-outage.js';

function capture(): { logs: { level: number; msg: string; down_ms?: number }[]; clock: FakeClock } & ReturnType<
  typeof createStoreOutageLog
> {
  const logs: { level: number; msg: string }[] = [];
  const clock = new FakeClock(0);
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line) as never) });
  return { logs, clock, ...createStoreOutageLog(logger, clock) };
}

const WARN = 40;
const INFO = 30;
const DEBUG = 20;
const down = new StoreUnavailableError('etcd unavailable: No connection established');

describe('store outage log', () => {
  it('warns once when etcd becomes unreachable, debugs the loops’ failures meanwhile, and says when it is back', async () => {
    const log = capture();
    log.failed(down, 'scheduler queue poll failed', { pool: 'general' });
    for (let i = 0; i < 30; i++) {
      await log.clock.advance(300);
      log.failed(down, i % 2 ? 'stats-scan failed' : 'scheduler queue poll failed');
    }
    log.ok();
    log.ok();
    expect(log.logs.map((l) => [l.level, l.msg])).toEqual([
      [WARN, 'etcd unreachable (scheduler queue poll failed); retrying, and logging at debug until it is back'],
      ...Array.from({ length: 30 }, (_, i) => [DEBUG, i % 2 ? 'stats-scan failed' : 'scheduler queue poll failed']),
      [INFO, 'etcd reachable again after 9.0 s'],
    ]);
    expect(log.logs.at(-1)?.down_ms).toBe(9000);
  });

  it('reminds at warn once a minute while the outage lasts, and warns anew for the next outage', async () => {
    const log = capture();
    log.failed(down, 'orphan recovery failed');
    for (let t = 0; t < 2.5 * OUTAGE_REMINDER_MS; t += 5000) {
      await log.clock.advance(5000);
      log.failed(down, 'merge-wal-sweep failed');
    }
    log.ok();
    log.failed(down, 'stats-scan failed');
    const warnings = log.logs.filter((l) => l.level === WARN).map((l) => l.msg);
    expect(warnings).toEqual([
      'etcd unreachable (orphan recovery failed); retrying, and logging at debug until it is back',
      'etcd still unreachable after 60 s',
      'etcd still unreachable after 120 s',
      'etcd unreachable (stats-scan failed); retrying, and logging at debug until it is back',
    ]);
  });

  it('tells etcd out of space from etcd away: says what to do once, stays open while reads succeed, and ends with the first write', async () => {
    const log = capture();
    const full = new StoreFullError('etcd is out of space (NOSPACE alarm: …) and refuses writes until …');
    log.failed(full, 'merge-wal-sweep failed', { job: 'merge-wal-sweep' });
    for (let t = 0; t < 1.5 * OUTAGE_REMINDER_MS; t += 5000) {
      await log.clock.advance(5000);
      // Reads go on working: polls and slots not yet due answer.
      log.ok();
      log.failed(full, 'scheduler queue poll failed', { pool: 'general' });
    }
    log.ok(true);
    log.ok(true);
    expect(log.logs.filter((l) => l.level !== DEBUG).map((l) => [l.level, l.msg])).toEqual([
      [
        WARN,
        'etcd is out of space and refuses writes (merge-wal-sweep failed): compact and defragment it, then disarm ' +
          'its NOSPACE alarm (docs/DEPLOY.md); retrying, and logging at debug until a write succeeds',
      ],
      [WARN, 'etcd still out of space, refusing writes after 60 s'],
      [INFO, 'etcd accepts writes again after 90.0 s'],
    ]);
  });

  it('keeps every failure that is not etcd being away a warning, and an ok with no outage silent', () => {
    const log = capture();
    log.ok();
    log.failed(new Error('worker answered garbage'), 'stats-scan failed');
    log.failed(new Error('worker answered garbage'), 'stats-scan failed');
    expect(log.logs.map((l) => [l.level, l.msg])).toEqual([
      [WARN, 'stats-scan failed'],
      [WARN, 'stats-scan failed'],
    ]);
  });
});
