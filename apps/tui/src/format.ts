/**
 * Text formatting for the screen: durations, countdowns, fixed-width cells. Pure functions; all
 * widths are in terminal columns, counting every code point as one column (server text is
 * sanitised ASCII-safe before it gets here, store names are ASCII by contract).
 */

/** A compact duration: `45s`, `12m05s`, `3h12m`, `2d04h`. Negative values count as 0. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${pad2(s % 60)}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${pad2(m % 60)}m`;
  return `${Math.floor(h / 24)}d${pad2(h % 24)}h`;
}

/** A countdown to `untilMs`, ticking each second: `9m59s`, `expired` once past. */
export function formatCountdown(untilMs: number, nowMs: number): string {
  const left = untilMs - nowMs;
  return left <= 0 ? 'expired' : formatDuration(left + 999);
}

/** Ages from this one on are shown to the minute (as kubectl's AGE column does). */
const AGE_TO_THE_MINUTE_MS = 10 * 60_000;

/**
 * `3s ago`, `9m05s ago`, then to the minute (`12m ago`, `3h12m ago`); `-` when unknown. An age
 * that ticks every second redraws its row every second: past ten minutes the seconds tell no one
 * anything, and a screen of them would cost a frame of changed rows each second.
 */
export function formatAgo(ms: number | undefined | null, nowMs: number): string {
  if (ms === undefined || ms === null) return '-';
  const age = nowMs - ms;
  if (age >= AGE_TO_THE_MINUTE_MS && age < 48 * 3600_000) {
    const m = Math.floor(age / 60_000);
    return m < 60 ? `${m}m ago` : `${Math.floor(m / 60)}h${pad2(m % 60)}m ago`;
  }
  return `${formatDuration(age)} ago`;
}

/** A local wall-clock time `HH:MM:SS`. */
export function formatClock(ms: number): string {
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

/**
 * When something ends, in local time: `14:03:07` today, `11-16 09:12` on another day (month-day,
 * no seconds: at that distance they do not matter).
 */
export function formatUntil(ms: number, nowMs: number): string {
  const d = new Date(ms);
  const n = new Date(nowMs);
  if (d.getFullYear() === n.getFullYear() && d.getMonth() === n.getMonth() && d.getDate() === n.getDate()) {
    return formatClock(ms);
  }
  return `${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/** A local date and time with its offset, for the detail pane: `2023-11-14 23:23:20 +01:00`. */
export function formatLocal(ms: number): string {
  const d = new Date(ms);
  const off = -d.getTimezoneOffset();
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${formatClock(ms)} ${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
}

/** Thousands separators: `7,985`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\u0000-\u007f]*$/;

/** Columns of text (one per code point; ASCII without splitting it). */
function columns(text: string): number {
  return ASCII.test(text) ? text.length : [...text].length;
}

/** Cuts `text` to `width` columns, ending in `cut` (`…`) when it had to cut. */
export function truncate(text: string, width: number, cut = '…'): string {
  if (width <= 0) return '';
  // Most text is shorter than its column: no need to split it into code points.
  if (text.length <= width) return text;
  const chars = [...text];
  if (chars.length <= width) return text;
  return width === 1 ? cut : `${chars.slice(0, width - 1).join('')}${cut}`;
}

/** Exactly `width` columns: truncated, then padded on the right (or left for `align: 'right'`). */
export function fit(text: string, width: number, align: 'left' | 'right' = 'left', cut = '…'): string {
  const t = truncate(text, width, cut);
  const gap = width - columns(t);
  if (gap <= 0) return t;
  return align === 'right' ? ' '.repeat(gap) + t : t + ' '.repeat(gap);
}

/** Splits text into lines of at most `width` columns, breaking at spaces where it can. */
export function wrap(text: string, width: number): string[] {
  if (width <= 0) return [];
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    let w = word;
    while ([...w].length > width) {
      // A word longer than a line (a path, a URL): hard-break it.
      if (line) {
        lines.push(line);
        line = '';
      }
      const chars = [...w];
      lines.push(chars.slice(0, width).join(''));
      w = chars.slice(width).join('');
    }
    if (!line) line = w;
    else if ([...line].length + 1 + [...w].length <= width) line += ` ${w}`;
    else {
      lines.push(line);
      line = w;
    }
  }
  if (line) lines.push(line);
  return lines;
}
