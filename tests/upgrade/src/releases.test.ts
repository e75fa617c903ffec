import { describe, expect, it } from 'vitest';
import { previousMinorRelease } from './releases.js';

describe('previousMinorRelease', () => {
  const kept = ['0.1.0', '0.1.2', '0.2.0', '0.3.1'];

  it('takes the newest release of the minor line before the version, whatever its patch or pre-release', () => {
    expect(previousMinorRelease(kept, '0.2.0')).toBe('0.1.2');
    expect(previousMinorRelease(kept, '0.2.1-next.0')).toBe('0.1.2');
    expect(previousMinorRelease(kept, '0.3.0-next.4')).toBe('0.2.0');
    expect(previousMinorRelease(kept, '1.0.0')).toBe('0.3.1');
  });

  it('finds none before the first minor line', () => {
    expect(previousMinorRelease(kept, '0.1.5')).toBeUndefined();
  });

  it('refuses what is not a version', () => {
    expect(() => previousMinorRelease(kept, 'next')).toThrow(/not a version/);
  });
});
