import { describe, expect, it } from 'vitest';
import { cooldownState, isParked } from './model.js';

describe('isParked', () => {
  it('is false without a park', () => {
    expect(isParked(undefined, 1_000)).toBe(false);
  });

  it('holds an open-ended park in force forever', () => {
    expect(isParked({ until_ms: null }, Number.MAX_SAFE_INTEGER)).toBe(true);
  });

  it('holds a timed park in force until, and not at, its until_ms', () => {
    expect(isParked({ until_ms: 2_000 }, 1_999)).toBe(true);
    expect(isParked({ until_ms: 2_000 }, 2_000)).toBe(false);
    expect(isParked({ until_ms: 2_000 }, 2_001)).toBe(false);
  });

  it('accepts any shape that carries until_ms, as the exporter and dashboard hold', () => {
    const apiPark = { reason: 'disk swap', by: 'ops', until_ms: 5_000, until: '1970-01-01T00:00:05.000Z' };
    expect(isParked(apiPark, 4_000)).toBe(true);
  });
});

describe('cooldownState', () => {
  it('is undefined with neither a record nor a park', () => {
    expect(cooldownState(undefined, undefined, 1_000)).toBeUndefined();
  });

  it('is undefined with only a lapsed park: it gates nothing', () => {
    expect(cooldownState(undefined, { until_ms: 1_000 }, 1_000)).toBeUndefined();
  });

  it('is parked while a park is in force, whatever the record says', () => {
    expect(cooldownState(undefined, { until_ms: null }, 1_000)).toBe('parked');
    expect(cooldownState({ until_ms: 9_000 }, { until_ms: 2_000 }, 1_000)).toBe('parked');
    expect(cooldownState({ until_ms: null }, { until_ms: null }, 1_000)).toBe('parked');
  });

  it('is below when failures are counted but no window opened', () => {
    expect(cooldownState({ until_ms: null }, undefined, 1_000)).toBe('below');
  });

  it('is cooling before until_ms and lapsed from until_ms on', () => {
    expect(cooldownState({ until_ms: 2_000 }, undefined, 1_999)).toBe('cooling');
    expect(cooldownState({ until_ms: 2_000 }, undefined, 2_000)).toBe('lapsed');
    expect(cooldownState({ until_ms: 2_000 }, undefined, 3_000)).toBe('lapsed');
  });

  it('falls back to the record once the park has lapsed', () => {
    expect(cooldownState({ until_ms: 9_000 }, { until_ms: 1_000 }, 2_000)).toBe('cooling');
  });
});
