import { Box, Text } from 'ink';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ORIGINAL_GET,
  ROWS_CACHED,
  type Tokenizer,
  cellsToString,
  installLineCache,
  lineCacheStats,
  styledChars,
} from './line-cache.js';

function Screen({ n }: { readonly n: number }) {
  return (
    <Box flexDirection="column">
      {Array.from({ length: 20 }, (_, i) => (
        <Text key={i}>
          {`rôw ${i} `.padEnd(40, '.')}
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

  it('draws the same frames, turning into text only the rows that changed', async () => {
    await installLineCache();
    const ink = render(<Screen n={1} />);
    const first = ink.lastFrame();
    const before = lineCacheStats();
    ink.rerender(<Screen n={2} />);
    const second = ink.lastFrame();
    const after = lineCacheStats();
    // One of twenty rows changed: one row drawn afresh, the nineteen others reused.
    expect(after.rowsDrawn - before.rowsDrawn).toBe(1);
    expect(after.rowsReused - before.rowsReused).toBeGreaterThanOrEqual(19);
    expect(second).toBe(first!.replace('changed 1', 'changed 2'));
    expect(second).toContain('rôw 19 ');
    ink.unmount();
  });

  it('draws every frame exactly as Ink does: random lines, colours, wide characters, transformers, off-grid writes', async () => {
    await installLineCache();
    const entry = createRequire(import.meta.url).resolve('ink');
    type Out = {
      write(x: number, y: number, text: string, o: { transformers: ((s: string, i: number) => string)[] }): void;
      get(): { output: string; height: number };
    };
    const { default: Output } = (await import(pathToFileURL(join(dirname(entry), 'output.js')).href)) as {
      default: new (o: { width: number; height: number }) => Out;
    };
    const original = (Output.prototype as unknown as Record<symbol, Out['get']>)[ORIGINAL_GET]!;
    // The row cache is in use (Ink's tokenizer was found next to it), not just the line cache.
    expect((Output.prototype as unknown as Record<symbol, boolean>)[ROWS_CACHED]).toBe(true);
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const words = ['plain', '\u001b[31mred\u001b[39m', '日本', '\u001b[1mbold\u001b[22m x', '🙂 ok', 'a\nb', ''];
    const inverse = (s: string): string => `\u001b[7m${s}\u001b[27m`;
    // A screen that changes a little from frame to frame, as a dashboard's does.
    let ops = Array.from({ length: 12 }, (_, i) => ({
      x: random(10),
      y: i,
      text: words[random(words.length)]!,
      inv: false,
    }));
    for (let frame = 0; frame < 200; frame++) {
      if (random(3) === 0) {
        const i = random(ops.length);
        ops = ops.map((o, j) =>
          j === i
            ? {
                x: random(14) - 2,
                y: random(16) - 2,
                text: words.slice(0, 1 + random(words.length)).join(' '),
                inv: random(2) === 0,
              }
            : o,
        );
      }
      const width = frame < 150 ? 30 : 24;
      const fast = new Output({ width, height: 12 });
      const slow = new Output({ width, height: 12 });
      for (const o of ops) {
        const t = { transformers: o.inv ? [inverse] : [] };
        fast.write(o.x, o.y, o.text, t);
        slow.write(o.x, o.y, o.text, t);
      }
      expect(fast.get()).toEqual(original.call(slow));
    }
  });

  it('makes the styled cells of an ASCII line exactly as Ink’s tokenizer does, without its segmenter', async () => {
    const entry = createRequire(import.meta.url).resolve('ink');
    const t = (await import(
      pathToFileURL(join(dirname(dirname(entry)), '..', '@alcalzone', 'ansi-tokenize', 'build', 'index.js')).href
    )) as Tokenizer;
    const parts = [
      'plain text ',
      '\u001b[31m',
      '\u001b[39m',
      '\u001b[1m',
      '\u001b[22m',
      '\u001b[7m',
      '\u001b[27m',
      '\u001b[0m',
      '\u001b[m',
      '\u001b[38;5;208m',
      '\u001b[1;31m',
      '\u001b[90m',
      'x',
      ' ~ ',
      '日本',
      '\u001b]8;;http://x\u0007',
    ];
    let seed = 3;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 500; i++) {
      const line = Array.from({ length: 1 + random(12) }, () => parts[random(parts.length)]).join('');
      expect(styledChars(line, t)).toEqual(t.styledCharsFromTokens(t.tokenize(line)));
    }
    // A row's cells turned back into text a run of alike-styled cells at a time: the same text.
    for (let i = 0; i < 500; i++) {
      const cells = Array.from({ length: 1 + random(4) }, () =>
        styledChars(Array.from({ length: random(10) }, () => parts[random(parts.length)]).join(''), t),
      ).flat();
      expect(cellsToString(cells, t)).toBe(t.styledCharsToString(cells));
    }
  });
});
