/* eslint-disable no-control-regex -- control characters are exactly what this file removes */
import { stripVTControlCharacters } from 'node:util';

// Control strings (OSC such as a window title or hyperlink, DCS, SOS, PM, APC) run to a BEL or
// ST terminator, and their payload may contain spaces that stripVTControlCharacters does not
// consume; a terminal would swallow an unterminated one to the end, so we drop it to the end.
const CONTROL_STRINGS =
  /(?:\u001b[\]PX^_]|[\u0090\u0098\u009d-\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c|$)/g;
// C0, DEL and C1 controls survive stripVTControlCharacters when they are not part of a complete
// escape sequence (a lone ESC, BEL, CR…); any of them could still move the cursor or retitle the
// terminal, so they become spaces.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/g;
// Bidirectional overrides and isolates reorder what follows them on screen ("Trojan Source"),
// so a store name or error could display as something else.
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Makes text from the master (worker errors, task details, names, hosts) safe to draw: removes
 * terminal escape sequences, turns control characters into spaces, drops bidirectional
 * controls and folds runs of spaces. Applied to every string the TUI receives, at the edge.
 */
export function sanitizeText(text: string): string {
  return stripVTControlCharacters(text.replace(CONTROL_STRINGS, ''))
    .replace(CONTROL_CHARS, ' ')
    .replace(BIDI_CONTROLS, '')
    .replace(/ {2,}/g, ' ')
    .trim();
}

/** A copy of `value` with {@link sanitizeText} applied to every string in it, keys included. */
export function sanitizeDeep<T>(value: T): T {
  return clean(value) as T;
}

function clean(value: unknown): unknown {
  if (typeof value === 'string') return sanitizeText(value);
  if (Array.isArray(value)) return value.map(clean);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[sanitizeText(k)] = clean(v);
    return out;
  }
  return value;
}
