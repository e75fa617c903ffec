import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Lines kept before the cache starts over (a 160×48 screen has ~50; countdowns add ~40 a second). */
export const LINE_CACHE_LIMIT = 20_000;

/** The part of Ink's `Output` (ink/build/output.js, 6.8) the cache relies on. */
interface InkOutput {
  caches: { readonly styledChars: Map<string, unknown> };
  get: (this: InkOutput) => { output: string; height: number };
}

/** What {@link installLineCache} did. */
export type LineCacheResult = 'installed' | 'already' | 'unsupported';

// On Ink's prototype, not in this module: a second copy of this module (the bundled binary next
// to the library build) must not wrap the method twice.
const MARK = Symbol.for('maintd-top.line-cache');

/**
 * Keeps Ink's per-line work between frames. Ink 6.8 draws every frame from scratch: each line of
 * text is split into graphemes (`Intl.Segmenter`) and turned into one styled-character object per
 * cell, in caches that live for one frame. That is most of a frame's cost (two thirds at
 * 160×48, see bench/tui.bench.ts), and nearly all of it repeats: a dashboard frame changes a few
 * rows. Every `Output` here shares one set of those caches (line text → styled characters,
 * widths), started over past {@link LINE_CACHE_LIMIT} lines. The cached values are never mutated
 * by Ink (it copies references into its grid), so sharing them changes no output.
 *
 * Touches Ink's internals (the module and its public `caches` field, resolved next to Ink's
 * entry point): when they are not what this expects (another Ink version), it does nothing.
 */
export async function installLineCache(): Promise<LineCacheResult> {
  let Output: { prototype: InkOutput } | undefined;
  try {
    const entry = createRequire(import.meta.url).resolve('ink');
    const mod = (await import(pathToFileURL(join(dirname(entry), 'output.js')).href)) as {
      default?: { prototype: InkOutput };
    };
    Output = mod.default;
  } catch {
    return 'unsupported';
  }
  const proto = Output?.prototype;
  if (!proto || typeof proto.get !== 'function') return 'unsupported';
  if ((proto as unknown as Record<symbol, unknown>)[MARK]) return 'already';
  const original = proto.get;
  let shared: InkOutput['caches'] | undefined;
  proto.get = function get(this: InkOutput) {
    const own = this.caches;
    if (own && own.styledChars instanceof Map) {
      // A fresh frame's (empty) caches become the shared ones at first and after a reset.
      if (!shared || shared.styledChars.size > LINE_CACHE_LIMIT) shared = own;
      else this.caches = shared;
    }
    return original.call(this);
  };
  Object.defineProperty(proto, MARK, { value: true });
  return 'installed';
}
