import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Lines kept before the cache starts over (a 160×48 screen has ~50; countdowns add ~40 a second).
 * A line holds an object per cell: 20,000 lines of a 120-column dashboard were ~240 MB of them
 * (over 1 GB with a style array per cell) for the GC to mark; 2,000 keep dozens of screens and
 * cost one frame of lines tokenized afresh a minute or so.
 */
export const LINE_CACHE_LIMIT = 2000;

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
/**
 * Set on the prototype when rows are reused too and ASCII lines skip the segmenter (Ink's
 * tokenizer was found), not just lines kept.
 */
export const ROWS_CACHED = Symbol.for('maintd-top.line-cache.rows');

/** The parts of Ink's tokenizer (`@alcalzone/ansi-tokenize`) this uses. */
export interface Tokenizer {
  readonly tokenize: (line: string) => readonly unknown[];
  readonly styledCharsFromTokens: (tokens: readonly unknown[]) => readonly StyledChar[];
  readonly styledCharsToString: (chars: readonly StyledChar[]) => string;
}

// Printable ASCII and SGR sequences (colours, bold, inverse) only: what the dashboard draws.
// eslint-disable-next-line no-control-regex
const SIMPLE_LINE = /^(?:[\u0020-\u007e]|\u001b\[[0-9;]*m)*$/;

/**
 * A line's styled cells, as Ink's tokenizer makes them, without its grapheme segmenter for the
 * lines that need none: in printable ASCII every character is one grapheme one column wide, so
 * only the escape sequences go through the tokenizer. Anything else goes through it whole.
 *
 * The tokenizer styles each run of text between escape sequences as one character standing for
 * it, whose styles all the run's cells then share (the tokenizer copies them for every cell, and
 * its object spread per cell was most of a new line's cost). Nothing changes a cell's styles.
 */
export function styledChars(line: string, t: Tokenizer): readonly StyledChar[] {
  if (!SIMPLE_LINE.test(line)) return t.styledCharsFromTokens(t.tokenize(line));
  const tokens: unknown[] = [];
  // Per character token, in order: the run of text it stands for, or undefined for one of the
  // tokenizer's own (kept as it made it).
  const runs: (string | undefined)[] = [];
  let i = 0;
  while (i < line.length) {
    if (line.charCodeAt(i) === 0x1b) {
      const end = line.indexOf('m', i) + 1;
      for (const token of t.tokenize(line.slice(i, end))) {
        tokens.push(token);
        if ((token as { type?: unknown }).type === 'char') runs.push(undefined);
      }
      i = end;
    } else {
      const next = line.indexOf('\u001b', i);
      const stop = next === -1 ? line.length : next;
      tokens.push({ type: 'char', value: '', fullWidth: false });
      runs.push(line.slice(i, stop));
      i = stop;
    }
  }
  const heads = t.styledCharsFromTokens(tokens);
  const cells: StyledChar[] = [];
  heads.forEach((head, k) => {
    const run = runs[k];
    if (run === undefined) {
      cells.push(head);
      return;
    }
    const { styles } = head;
    for (let c = 0; c < run.length; c++) cells.push({ type: 'char', value: run[c]!, fullWidth: false, styles });
  });
  return cells;
}

/** A code of a cell's style, as the tokenizer makes it: `code` turns it on, `endCode` off. */
interface AnsiCode {
  readonly code: string;
  readonly endCode: string;
}

/** Whether two cells' styles are the same codes (a cell after a cell so styled adds no escape). */
function sameStyles(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as AnsiCode;
    const y = b[i] as AnsiCode;
    if (x !== y && (x.code !== y.code || x.endCode !== y.endCode)) return false;
  }
  return true;
}

/**
 * The tokenizer's `styledCharsToString` of a row of cells, called with one cell per run of cells
 * styled alike (its value the run's values): the same text, since between two cells styled alike
 * the tokenizer adds nothing. It diffs the styles of every cell with the cell before it, and that
 * diff allocates three sets and four arrays: per cell of a 120-column row, most of what a frame
 * allocated.
 */
export function cellsToString(cells: readonly StyledChar[], t: Pick<Tokenizer, 'styledCharsToString'>): string {
  const runs: StyledChar[] = [];
  for (let i = 0; i < cells.length;) {
    const first = cells[i]!;
    let value = first.value;
    let j = i + 1;
    for (; j < cells.length && sameStyles(cells[j]!.styles, first.styles); j++) value += cells[j]!.value;
    runs.push(j === i + 1 ? first : { ...first, value });
    i = j;
  }
  return t.styledCharsToString(runs);
}

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

/** How much of the frames drawn so far was reused (for tests and profiling). */
export interface LineCacheStats {
  /** Rows whose text was the previous frame's. */
  rowsReused: number;
  /** Rows turned into text afresh. */
  rowsDrawn: number;
}

const stats: LineCacheStats = { rowsReused: 0, rowsDrawn: 0 };

/** A copy of the counters of the rows reused and drawn by this copy of the module. */
export function lineCacheStats(): LineCacheStats {
  return { ...stats };
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
  let tokenizer: Tokenizer | undefined;
  try {
    const entry = createRequire(import.meta.url).resolve('ink');
    const mod = (await import(pathToFileURL(join(dirname(entry), 'output.js')).href)) as {
      default?: { prototype: InkOutput };
    };
    Output = mod.default;
    // Ink's own dependency (not this package's): next to Ink (pnpm, npm) or inside it.
    const ink = dirname(dirname(entry));
    const path = [
      join(ink, '..', '@alcalzone', 'ansi-tokenize', 'build', 'index.js'),
      join(ink, 'node_modules', '@alcalzone', 'ansi-tokenize', 'build', 'index.js'),
    ].find((p) => existsSync(p));
    if (path) {
      const t = (await import(pathToFileURL(path).href)) as Partial<Record<keyof Tokenizer, unknown>>;
      if (
        typeof t.tokenize === 'function' &&
        typeof t.styledCharsFromTokens === 'function' &&
        typeof t.styledCharsToString === 'function'
      ) {
        tokenizer = t as unknown as Tokenizer;
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
        // Printable ASCII is one column (what Ink's width would say, without its lookup per cell).
        const code = character.value.length === 1 ? character.value.charCodeAt(0) : 0;
        const w = code >= 0x20 && code < 0x7f ? 1 : Math.max(1, caches.getStringWidth(character.value));
        // A wide character covers the cells after it, as Ink covers them.
        for (let i = 1; i < w; i++) {
          cells[offsetX + i] = { type: 'char', value: '', fullWidth: false, styles: character.styles };
        }
        offsetX += w;
      }
    }
    return cellsToString(
      cells.filter((c) => c !== undefined),
      tokenizer!,
    ).trimEnd();
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
      if (old && samePlacements(old.placements, placements)) {
        stats.rowsReused++;
        return old;
      }
      stats.rowsDrawn++;
      return { placements, text: rowText(placements, width, caches) };
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
        const t = tokenizer;
        if (t) {
          const lines = own.styledChars;
          // Ink's own lookup, with the segmenter skipped where it is not needed.
          Object.defineProperty(own, 'getStyledChars', {
            value: (line: string): readonly StyledChar[] => {
              let chars = lines.get(line);
              if (chars === undefined) {
                chars = styledChars(line, t);
                lines.set(line, chars);
              }
              return chars;
            },
          });
        }
      } else this.caches = shared;
    }
    return tokenizer && Array.isArray(this.operations) ? fast.call(this) : original.call(this);
  };
  Object.defineProperty(proto, MARK, { value: true });
  Object.defineProperty(proto, ORIGINAL_GET, { value: original });
  Object.defineProperty(proto, ROWS_CACHED, { value: tokenizer !== undefined });
  return 'installed';
}
