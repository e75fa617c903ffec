import { sanitizeError } from '@maintd/core';

// Printable ASCII words with single spaces between them: no escape sequence, control or
// bidirectional character can hide in such a string, so it is already clean. Nearly every
// string of a read (keys, kinds, names, ids) is one, and skipping core's pass for them is most of
// what a full read of 10,000 cooldowns and stores costs the event loop (figures in README.md).
const PLAIN = /^[!-~]+(?: [!-~]+)*$/;

/**
 * Makes text from the master (worker errors, task details, names, hosts) safe to draw: core's
 * {@link sanitizeError} (escape sequences removed, control characters made spaces,
 * bidirectional controls dropped, spaces folded), without its length bound: that defaults to a
 * cooldown's 512 characters, while a task's error or detail is stored with up to 2048 and the
 * detail pane shows it whole. The master bounds what it stores; the dashboard draws what it gets.
 * Applied to every string the TUI receives, at the edge.
 */
export function sanitizeText(text: string): string {
  return PLAIN.test(text) ? text : sanitizeError(text, Number.POSITIVE_INFINITY);
}

/**
 * `value` with {@link sanitizeText} applied to every string in it, keys included: the same object
 * where nothing needed it (nearly always: a page of 200 clean stores is not copied), else a copy
 * of what changed.
 */
export function sanitizeDeep<T>(value: T): T {
  return clean(value) as T;
}

function clean(value: unknown): unknown {
  if (typeof value === 'string') return sanitizeText(value);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const c = clean(v);
      if (c !== v) (out ??= value.slice())[i] = c;
    }
    return out ?? value;
  }
  if (value !== null && typeof value === 'object') {
    const source = value as Record<string, unknown>;
    const keys = Object.keys(source);
    let out: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const v = source[k];
      const ck = sanitizeText(k);
      const cv = clean(v);
      if (!out && (ck !== k || cv !== v)) {
        // The first change: copy what came before it, as it was.
        out = {};
        for (let j = 0; j < i; j++) out[keys[j]!] = source[keys[j]!];
      }
      if (out) out[ck] = cv;
    }
    return out ?? value;
  }
  return value;
}
