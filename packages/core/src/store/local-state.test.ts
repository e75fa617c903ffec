import { describe, expect, it } from 'vitest';
import type { TaskRecord } from '../model.js';
import { KnownRecords } from './local-state.js';

const task = (id: string): TaskRecord => ({
  id,
  kind: 'compact',
  target: `store-${id}`,
  state: 'queued',
  enqueued_at: 0,
  attempt: 0,
  source: 'manual',
});

describe('KnownRecords', () => {
  it('hands a remembered record to one claim attempt only', () => {
    const known = new KnownRecords();
    known.remember(task('a'), 10);
    expect(known.take('a')).toMatchObject({ modRevision: 10 });
    expect(known.take('a')).toBeUndefined();
  });

  it('does not remember a record read before this instance claimed the task, but does a later one', () => {
    const known = new KnownRecords();
    known.claimed('a', 20);
    // A read-ahead that began before the claim committed answers after it.
    known.remember(task('a'), 10);
    expect(known.has('a')).toBe(false);
    // Requeued after the claim (recovery): a newer record is remembered again.
    known.remember(task('a'), 30);
    expect(known.take('a')).toMatchObject({ modRevision: 30 });
  });

  it('forgets what it held of a task this instance claims', () => {
    const known = new KnownRecords();
    known.remember(task('a'), 10);
    known.claimed('a', 20);
    expect(known.has('a')).toBe(false);
  });
});
