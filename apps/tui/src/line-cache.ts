import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Lines kept before the cache starts over (a 160×48 screen has ~50; countdowns add ~40 a second). */
export const LINE_CACHE_LIMIT = 20_000;

/** One cell of Ink's output grid (`@alcalzone/ansi-tokenize`'s styled character). */
interface StyledChar {
  readonly type: 'char';
  readonly value: string;
  readonly fullWidth: boolean;
  readonly styles: readonly unknown[];
}

/** Ink's per-frame caches (ink/build/output.js, 6.8). */
interface InkCaches {
  readonly styledChars: Map<string, readonly StyledChar[]>;
  getStyledChars(this: void, line: string): readonly StyledChar[];
  getStringWidth(this: void, text: string): number;
}

type Operation =
  | {
      readonly type: 'write';
      readonly x: number;
      readonly y: number;
      readonly text: string;
      readonly transformers: readonly ((line: string, index: number) => string)[];
    }
  | { readonly type: 'clip' | 'unclip' };

/** The part of Ink's `Output` these caches rely on. */
interface InkOutput {
  readonly width: number;
  readonly height: number;
  readonly operations: readonly Operation[];
  caches: InkCaches;
  get: (this: InkOutput) => { output: string; height: number };
}

/** What {@link installLineCache} did. */
export type LineCacheResult = 'installed' | 'already' | 'unsupported';

// On Ink's prototype, not in this module: a second copy of this module (the bundled binary next
// to the library build) must not wrap the method twice.
const MARK = Symbol.for('maintd-top.line-cache');
/** Ink's own `get`, kept on the prototype (the tests compare both). */
export const ORIGINAL_GET = Symbol.for('maintd-top.line-cache.original-get');
/** Set on the prototype when rows are reused too (Ink's tokenizer was found), not lines alone. */
export const ROWS_CACHED = Symbol.for('maintd-top.line-cache.rows');

/** Where a line's styled characters go in a row: the row is a function of its placements. */
interface Placement {
  readonly x: number;
  readonly chars: readonly StyledChar[];
}

/** The rows of the latest frame, to reuse those whose placements did not change. */
interface Rows {
  readonly width: number;
  readonly rows: readonly { readonly placements: readonly Placement[]; readonly text: string }[];
}

const BLANK: StyledChar = Object.freeze({ type: 'char', value: ' ', fullWidth: false, styles: Object.freeze([]) });

function samePlacements(a: readonly Placement[], b: readonly Placement[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.x !== b[i]!.x || a[i]!.chars !== b[i]!.chars) return false;
  return true;
}

/**
 * Keeps Ink's per-line and per-row work between frames. Ink 6.8 draws every frame from scratch:
 * each line of text is split into graphemes (`Intl.Segmenter`) and turned into one styled-cell
 * object per character, every cell of the grid (blank ones too) is turned back into a string with
 * its escape codes, and all of it is thrown away after the frame. That is most of a frame's cost,
 * and nearly all of it repeats: a dashboard frame changes a few rows.
 *
 * Two caches, both exact:
 * - every `Output` shares one set of Ink's line caches (line text → styled cells, widths),
 *   started over past {@link LINE_CACHE_LIMIT} lines; Ink never mutates the cached cells (it
 *   copies references into its grid);
 * - a row is the pure function of the lines placed on it (where, and which cells): when those
 *   are the same as in the previous frame (the same cached cells at the same columns), its text
 *   is the previous frame's. Frames with clipping (`overflow="hidden"`) take Ink's own path.
 *
 * Touches Ink's internals (resolved next to Ink's entry point; the version this was written
 * against is 6.8): when they are not what this expects, it does nothing.
 */
export async function installLineCache(): Promise<LineCacheResult> {
  let Output: { prototype: InkOutput } | undefined;
  let styledCharsToString: ((chars: readonly StyledChar[]) => string) | undefined;
  try {
    const entry = createRequire(import.meta.url).resolve('ink');
    const mod = (await import(pathToFileURL(join(dirname(entry), 'output.js')).href)) as {
      default?: { prototype: InkOutput };
    };
    Output = mod.default;
    // Ink's own dependency (not this package's): next to Ink (pnpm, npm) or inside it.
    const ink = dirname(dirname(entry));
    const tokenizer = [
      join(ink, '..', '@alcalzone', 'ansi-tokenize', 'build', 'index.js'),
      join(ink, 'node_modules', '@alcalzone', 'ansi-tokenize', 'build', 'index.js'),
    ].find((p) => existsSync(p));
    if (tokenizer) {
      const t = (await import(pathToFileURL(tokenizer).href)) as { styledCharsToString?: unknown };
      if (typeof t.styledCharsToString === 'function') {
        styledCharsToString = t.styledCharsToString as (chars: readonly StyledChar[]) => string;
      }
    }
  } catch {
    return 'unsupported';
  }
  const proto = Output?.prototype;
  if (!proto || typeof proto.get !== 'function') return 'unsupported';
  const marks = proto as unknown as Record<symbol, unknown>;
  if (marks[MARK]) return 'already';
  const original = proto.get;
  let shared: InkCaches | undefined;
  let last: Rows | undefined;

  const rowText = (placements: readonly Placement[], width: number, caches: InkCaches): string => {
    const cells: StyledChar[] = new Array<StyledChar>(width).fill(BLANK);
    for (const { x, chars } of placements) {
      let offsetX = x;
      for (const character of chars) {
        cells[offsetX] = character;
        const w = Math.max(1, caches.getStringWidth(character.value));
        // A wide character covers the cells after it, as Ink covers them.
        for (let i = 1; i < w; i++) {
          cells[offsetX + i] = { type: 'char', value: '', fullWidth: false, styles: character.styles };
        }
        offsetX += w;
      }
    }
    return styledCharsToString!(cells.filter((c) => c !== undefined)).trimEnd();
  };

  const fast = function get(this: InkOutput): { output: string; height: number } {
    const { width, height, operations, caches } = this;
    const placed: Placement[][] = Array.from({ length: height }, () => []);
    for (const op of operations) {
      if (op.type !== 'write') return original.call(this);
      const lines = op.text.split('\n');
      let offsetY = 0;
      for (let index = 0; index < lines.length; index++) {
        // As Ink: a line below (or above) the grid is skipped, and the lines after it with it.
        const row = placed[op.y + offsetY];
        if (!row) continue;
        let line = lines[index]!;
        for (const transformer of op.transformers) line = transformer(line, index);
        row.push({ x: op.x, chars: caches.getStyledChars(line) });
        offsetY++;
      }
    }
    const prev = last?.width === width ? last.rows : undefined;
    const rows = placed.map((placements, r) => {
      const old = prev?.[r];
      return old && samePlacements(old.placements, placements)
        ? old
        : { placements, text: rowText(placements, width, caches) };
    });
    last = { width, rows };
    return { output: rows.map((r) => r.text).join('\n'), height };
  };

  proto.get = function get(this: InkOutput) {
    const own = this.caches;
    if (own && own.styledChars instanceof Map) {
      // A fresh frame's (empty) caches become the shared ones at first and after a reset.
      if (!shared || shared.styledChars.size > LINE_CACHE_LIMIT) {
        shared = own;
        last = undefined;
      } else this.caches = shared;
    }
    return styledCharsToString && Array.isArray(this.operations) ? fast.call(this) : original.call(this);
  };
  Object.defineProperty(proto, MARK, { value: true });
  Object.defineProperty(proto, ORIGINAL_GET, { value: original });
  Object.defineProperty(proto, ROWS_CACHED, { value: styledCharsToString !== undefined });
  return 'installed';
}
