import { createLogger } from '@maintd/settings/logging';
import { describe, expect, it } from 'vitest';
import { PRETTY_LOG_FORMAT } from './log-format.js';

/** The scheduler's lines as `LOG_FORMAT=pretty` writes them, without colour. */
function pretty(write: (log: ReturnType<typeof createLogger>) => void): string[] {
  const lines: string[] = [];
  const log = createLogger({
    level: 'info',
    format: 'pretty',
    base: { master_id: 'm1' },
    colorize: false,
    pretty: PRETTY_LOG_FORMAT,
    destination: { write: (s: string) => void lines.push(...s.split('\n').filter((l) => l !== '')) },
  });
  write(log);
  return lines.map((l) => l.replace(/^\[[0-9:.]+\] /, ''));
}

const TASK = { task_id: '0190', kind: 'merge_wal', target: 'store-07', attempt: 1, source: 'sweep', workers: 3 };

describe('PRETTY_LOG_FORMAT', () => {
  it('writes a task outcome as one short line', () => {
    const error = `HTTP 500: Not found: s3://bucket/store-07/data/${'f'.repeat(300)}.lance (merged 0 generations across 0/3 workers)`;
    expect(
      pretty((log) => {
        log.info(
          { ...TASK, duration_ms: 1234, state: 'done', detail: 'merged 12 generations across 3/3 workers' },
          'task done',
        );
        log.warn(
          { ...TASK, attempt: 2, source: 'manual', duration_ms: 45_000, state: 'failed', error, error_class: 'target' },
          'task failed',
        );
      }),
    ).toEqual([
      'INFO: merge_wal store-07 done in 1.2 s: merged 12 generations across 3/3 workers',
      expect.stringMatching(
        /^WARN: merge_wal store-07 failed in 45 s \(manual\), attempt 2: HTTP 500: Not found: s3:\/\/bucket\/store-07\/data\/f+…$/,
      ),
    ]);
    const [failed] = pretty((log) => log.warn({ ...TASK, duration_ms: 1, error }, 'task failed'));
    expect(failed!.length).toBeLessThan(220);
  });

  it('makes a target entering its cooldown stand out', () => {
    const [line] = pretty((log) =>
      log.warn(
        {
          kind: 'compact',
          target: 'broken-1',
          failures: 3,
          cooldown_secs: 600,
          until_ms: 1,
          last_error: 'HTTP 500: boom',
        },
        'target failed repeatedly; sweeps will skip it until the cooldown lapses',
      ),
    );
    expect(line).toBe(
      'WARN:  COOLDOWN  compact broken-1: 3 failures in a row; sweeps skip it for 10 min: HTTP 500: boom',
    );
  });

  it('keeps other lines as they were, their subject first and no field lost', () => {
    expect(
      pretty((log) => {
        log.info({ kind: 'merge_wal', candidates: 40, enqueued: 3 }, 'merge_wal sweep queued 3 task(s)');
        log.info({ kind: 'compact', target: 's1' }, 'target succeeded; cooldown cleared');
        log.warn({ task_id: 't1', kind: 'compact', target: 's1' }, 'task abandoned at shutdown; peers will recover it');
      }),
    ).toEqual([
      'INFO: merge_wal sweep queued 3 task(s) {"candidates":40,"enqueued":3}',
      'INFO: compact s1: target succeeded; cooldown cleared',
      'WARN: compact s1: task abandoned at shutdown; peers will recover it task_id="t1"',
    ]);
  });
});
