import { Box, Text } from 'ink';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { installLineCache } from './line-cache.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function Screen({ n }: { readonly n: number }) {
  return (
    <Box flexDirection="column">
      {Array.from({ length: 20 }, (_, i) => (
        <Text key={i}>
          {`row ${i} `.padEnd(40, '.')}
          <Text color="red">{i === 0 ? `changed ${n}` : 'same'}</Text>
        </Text>
      ))}
    </Box>
  );
}

describe('installLineCache', () => {
  it('installs once on Ink’s Output, and a second copy of it does nothing', async () => {
    expect(['installed', 'already']).toContain(await installLineCache());
    expect(await installLineCache()).toBe('already');
  });

  it('draws the same frames, re-measuring only the lines that changed', async () => {
    await installLineCache();
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    const ink = render(<Screen n={1} />);
    const first = ink.lastFrame();
    const calls = segment.mock.calls.length;
    ink.rerender(<Screen n={2} />);
    const second = ink.lastFrame();
    // One of twenty lines changed: Ink split one line into graphemes, not twenty.
    expect(segment.mock.calls.length - calls).toBeLessThanOrEqual(2);
    expect(second).toBe(first!.replace('changed 1', 'changed 2'));
    expect(second).toContain('row 19 ');
    ink.unmount();
  });
});
