import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.js';
import { createIdGenerator } from './ids.js';
import { TaskRecordSchema } from './model.js';
import { seededRandom } from './random.js';

describe('createIdGenerator', () => {
  it('yields valid UUIDv7 ids in strictly increasing order, even within one millisecond', async () => {
    const clock = new FakeClock();
    const next = createIdGenerator(clock, seededRandom(1));
    const ids: string[] = [];
    for (let i = 0; i < 1000; i++) {
      ids.push(next());
      if (i % 100 === 0) await clock.advance(1);
    }
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 10)) expect(TaskRecordSchema.shape.id.safeParse(id).success).toBe(true);
  });

  it('is reproducible from the same clock and seed', () => {
    const a = createIdGenerator(new FakeClock(5), seededRandom(42));
    const b = createIdGenerator(new FakeClock(5), seededRandom(42));
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
  });

  it('encodes the clock time, so ids sort by enqueue time', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const next = createIdGenerator(clock, seededRandom(3));
    const first = next();
    await clock.advance(60_000);
    const later = next();
    expect(parseInt(first.replace(/-/g, '').slice(0, 12), 16)).toBe(Date.UTC(2026, 0, 1));
    expect(later > first).toBe(true);
  });
});
