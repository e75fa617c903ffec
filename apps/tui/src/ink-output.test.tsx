import { Box, Text } from 'ink';
import { render } from 'ink-testing-library';
import type { ReactNode } from 'react';
import { describe, expect, it } from 'vitest';

// Ink is patched (patches/ink@6.8.0.patch): frames without clipping are drawn from lines and rows
// kept from earlier frames; frames with clipping take Ink's own path. A box that clips nothing
// sends the same screen through Ink's own path, so the two must draw alike, frame after frame.

interface Item {
  readonly x: number;
  readonly text: string;
  readonly color: string | undefined;
  readonly inverse: boolean;
}

function Screen({ items, clip }: { readonly items: readonly Item[]; readonly clip: boolean }): ReactNode {
  return (
    <Box flexDirection="column" width={30} height={16} overflowY={clip ? 'hidden' : 'visible'}>
      {items.map((item, i) => (
        <Box key={i} marginLeft={item.x}>
          <Text inverse={item.inverse}>
            {'· '}
            <Text color={item.color}>{item.text}</Text>
            {' ~'}
          </Text>
        </Box>
      ))}
    </Box>
  );
}

describe('Ink’s output, as patched', () => {
  it('draws every frame as Ink 6.8.0 does: colours, wide characters, emoji, several lines, rows changing', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const words = ['plain', 'red', '日本', 'bold x', '🙂 ok', 'a\nb', 'x'.repeat(40), 'é', ''];
    const colors = [undefined, 'red', 'green', 'gray'];
    const item = (): Item => ({
      x: random(6),
      text: words.slice(0, 1 + random(words.length)).join(' '),
      color: colors[random(colors.length)],
      inverse: random(4) === 0,
    });
    let items = Array.from({ length: 8 }, item);
    const patched = render(<Screen items={items} clip={false} />);
    const own = render(<Screen items={items} clip />);
    for (let frame = 0; frame < 150; frame++) {
      if (random(2) === 0) {
        const i = random(items.length);
        items = items.map((it, j) => (j === i ? item() : it));
      }
      patched.rerender(<Screen items={items} clip={false} />);
      own.rerender(<Screen items={items} clip />);
      expect(patched.lastFrame()).toBe(own.lastFrame());
    }
    patched.unmount();
    own.unmount();
  });

  it('draws a changed row anew and keeps the others', () => {
    const rows = (n: number): Item[] =>
      Array.from({ length: 10 }, (_, i) => ({
        x: 0,
        text: i === 3 ? `changed ${n}` : `row ${i}`,
        color: 'red',
        inverse: false,
      }));
    const ink = render(<Screen items={rows(1)} clip={false} />);
    const first = ink.lastFrame()!;
    ink.rerender(<Screen items={rows(2)} clip={false} />);
    expect(ink.lastFrame()).toBe(first.replace('changed 1', 'changed 2'));
    ink.unmount();
  });
});
