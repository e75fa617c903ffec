import { FakeClock, createIdGenerator, keysFor, seededRandom } from '@maintd/core';
import { describe, expect, it } from 'vitest';
import { taskMapKey, uuidV7Ms } from './task-id.js';

const keys = keysFor('/maintd');
const at = keys.tasksPrefix.length;

describe('task map keys', () => {
  it('packs a task id into 16 characters that sort as the ids do, and reads its UUIDv7 time', async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const newId = createIdGenerator(clock, seededRandom(3));
    const first = newId();
    const second = newId();
    await clock.advance(1234);
    const third = newId();
    const packed = [first, second, third].map((id) => taskMapKey(keys.task(id), at));
    expect(packed.every((k) => k.length === 16)).toBe(true);
    expect([...packed].sort()).toEqual(packed);
    expect(packed.map(uuidV7Ms)).toEqual([1_700_000_000_000, 1_700_000_000_000, 1_700_000_001_234]);
  });

  it('keeps a key that does not end in a lowercase UUID whole, and reads no time from it or from another UUID version', () => {
    const legacy = taskMapKey(`${keys.tasksPrefix}legacy-1`, at);
    const upper = taskMapKey(keys.task('0190F0E2-0000-7000-8000-000000000000'), at);
    expect(legacy).not.toBe(taskMapKey(`${keys.tasksPrefix}legacy-2`, at));
    expect([legacy, upper].map(uuidV7Ms)).toEqual([undefined, undefined]);
    expect(uuidV7Ms(taskMapKey(keys.task('0190f0e2-0000-4000-8000-000000000000'), at))).toBeUndefined();
    // A whole key as long as a packed id (and whose seventh character looks like version 7) is none.
    const short = taskMapKey(`${keys.tasksPrefix}x`, at);
    expect(short).toHaveLength(16);
    expect(uuidV7Ms(short)).toBeUndefined();
  });
});
