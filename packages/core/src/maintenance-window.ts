import type { TaskKind } from './model.js';

const MINUTE_MS = 60_000;
const DAY_MINUTES = 24 * 60;
/** How far ahead a window's next change is looked for: a day, and the days around a DST change. */
const LOOKAHEAD_MS = 3 * DAY_MINUTES * MINUTE_MS;

/** One daily range of a maintenance window, in minutes of the local day: `to` may be before `from` (it spans midnight). */
export interface DailyRange {
  /** First minute of the day the range is open. */
  readonly from: number;
  /** First minute of the day it is closed again (1440: midnight). */
  readonly to: number;
}

/**
 * When one kind's automatic work may start (docs/ARCHITECTURE.md §3.2): daily ranges of local
 * time in an IANA zone. Outside them the kind's sweeps enqueue nothing and its queued automatic
 * tasks wait; running tasks finish and manual runs are never gated.
 */
export interface MaintenanceWindow {
  /** The kind it bounds. */
  readonly kind: TaskKind;
  /** The ranges as written, e.g. `22:00-05:00;12:00-13:00`. */
  readonly spec: string;
  /** The ranges, parsed. */
  readonly ranges: readonly DailyRange[];
  /** The IANA zone the ranges are local to. */
  readonly tz: string;
}

/** A window as it stands at one instant. */
export interface WindowState {
  /** Whether the kind's automatic work may start now. */
  readonly open: boolean;
  /** When that changes next (epoch ms), or null when it never does. */
  readonly nextChangeMs: number | null;
}

/** The outcome of parsing `TASK_WINDOWS`: the windows, or what is wrong with the text. */
export type WindowsParse =
  | { readonly ok: true; readonly windows: readonly MaintenanceWindow[] }
  | { readonly ok: false; readonly error: string };

const TIME = /^([01]\d|2[0-4]):([0-5]\d)$/;
const KIND = /^[a-z][a-z0-9_]{0,62}$/;

function minutes(text: string): number | undefined {
  const m = TIME.exec(text.trim());
  if (!m) return undefined;
  const value = Number(m[1]) * 60 + Number(m[2]);
  return value <= DAY_MINUTES ? value : undefined;
}

/** Whether `tz` names a zone this runtime knows (the platform's own zone database). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Parses `TASK_WINDOWS` (`kind=HH:MM-HH:MM[;HH:MM-HH:MM…],kind=…`) in the zone `tz`. A range that
 * ends before it starts spans midnight; `24:00` is the day's end. An empty text is no window.
 */
export function parseTaskWindows(text: string, tz: string): WindowsParse {
  if (!isTimeZone(tz))
    return { ok: false, error: `unknown time zone "${tz}" (expected an IANA name such as Europe/Berlin)` };
  const windows: MaintenanceWindow[] = [];
  for (const entry of text.split(',').map((s) => s.trim())) {
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    const kind = eq < 0 ? '' : entry.slice(0, eq).trim();
    if (!KIND.test(kind)) return { ok: false, error: `expected kind=HH:MM-HH:MM[;HH:MM-HH:MM], got "${entry}"` };
    if (windows.some((w) => w.kind === kind)) return { ok: false, error: `${kind} has two entries` };
    const spec = entry.slice(eq + 1).trim();
    const ranges: DailyRange[] = [];
    for (const part of spec.split(';')) {
      const [a, b, ...rest] = part.split('-');
      const from = a === undefined ? undefined : minutes(a);
      const to = b === undefined ? undefined : minutes(b);
      if (from === undefined || to === undefined || rest.length > 0 || from === DAY_MINUTES) {
        return { ok: false, error: `${kind}: expected HH:MM-HH:MM (00:00 to 24:00), got "${part.trim()}"` };
      }
      if (from === to) return { ok: false, error: `${kind}: "${part.trim()}" is empty (from equals to)` };
      ranges.push({ from, to });
    }
    windows.push({ kind, spec: ranges.map(formatRange).join(';'), ranges, tz });
  }
  return { ok: true, windows };
}

function hhmm(m: number): string {
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

function formatRange(r: DailyRange): string {
  return `${hhmm(r.from)}-${hhmm(r.to)}`;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The minute of the local day in `tz` at `ms`. */
export function localMinute(ms: number, tz: string): number {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', hour: '2-digit', minute: '2-digit' });
    formatters.set(tz, f);
  }
  let hour = 0;
  let minute = 0;
  for (const p of f.formatToParts(ms)) {
    if (p.type === 'hour') hour = Number(p.value);
    else if (p.type === 'minute') minute = Number(p.value);
  }
  return hour * 60 + minute;
}

function inRange(r: DailyRange, m: number): boolean {
  return r.from < r.to ? m >= r.from && m < r.to : m >= r.from || m < r.to;
}

/** Whether `window` lets automatic work start at `ms`. */
export function isWindowOpen(window: MaintenanceWindow, ms: number): boolean {
  const m = localMinute(ms, window.tz);
  return window.ranges.some((r) => inRange(r, m));
}

/** Local minutes until the next range boundary strictly after minute `m` (1..1440). */
function minutesToBoundary(window: MaintenanceWindow, m: number): number {
  let best = DAY_MINUTES;
  for (const r of window.ranges) {
    for (const b of [r.from, r.to % DAY_MINUTES]) {
      const d = (b - m + DAY_MINUTES) % DAY_MINUTES;
      if (d > 0 && d < best) best = d;
    }
  }
  return best;
}

/**
 * Whether `window` is open at `nowMs`, and when that next changes. Jumps from boundary to
 * boundary of local time, so a change of the zone's offset (DST) between two of them is found
 * too: the instant is then narrowed down to the minute.
 */
export function windowState(window: MaintenanceWindow, nowMs: number): WindowState {
  const open = isWindowOpen(window, nowMs);
  let at = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
  const end = nowMs + LOOKAHEAD_MS;
  while (at < end) {
    const next = at + minutesToBoundary(window, localMinute(at, window.tz)) * MINUTE_MS;
    if (isWindowOpen(window, next) !== open) {
      // Changed in (at, next]: the first minute that differs.
      let lo = at;
      let hi = next;
      while (hi - lo > MINUTE_MS) {
        const mid = lo + Math.floor((hi - lo) / MINUTE_MS / 2) * MINUTE_MS;
        if (isWindowOpen(window, mid) !== open) hi = mid;
        else lo = mid;
      }
      return { open, nextChangeMs: hi };
    }
    at = next;
  }
  return { open, nextChangeMs: null };
}

/** The kinds among `kinds` whose automatic work may start at `ms` (a kind without a window always may). */
export function openKinds(
  windows: readonly MaintenanceWindow[],
  kinds: readonly TaskKind[],
  ms: number,
): readonly TaskKind[] {
  return kinds.filter((kind) => {
    const w = windows.find((x) => x.kind === kind);
    return !w || isWindowOpen(w, ms);
  });
}
