// The Overview's capacity, causes and windows as text: pure, so the tests pin them without a screen.
import type { KindCapacity, MaintenanceWindow, StoreUse } from '../api/types.js';
import { formatDuration } from '../format.js';

/** `22:00`: a time of day in a time zone (the window's own: its ranges are written in it). */
export function clockIn(ms: number, tz: string): string {
  const options: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };
  try {
    return new Intl.DateTimeFormat('en-GB', { ...options, timeZone: tz }).format(ms);
  } catch {
    // A zone this runtime does not know: UTC, said.
    return `${new Intl.DateTimeFormat('en-GB', { ...options, timeZone: 'UTC' }).format(ms)} UTC`;
  }
}

/**
 * Where a kind stands with its maintenance window, at `now` (the dashboard's clock):
 * `compact: outside its window, opens 22:00 (in 3h12m)`, `compact: in its window, closes 05:00 (in 2h00m)`.
 */
export function windowText(w: MaintenanceWindow, now: number): string {
  const where = w.open ? 'in its window' : 'outside its window';
  const next = w.next_change === null ? Number.NaN : Date.parse(w.next_change);
  if (Number.isNaN(next)) return `${w.kind}: ${where}${w.open ? ', always' : ', never opens'}`;
  const verb = w.open ? 'closes' : 'opens';
  return `${w.kind}: ${where}, ${verb} ${clockIn(next, w.tz)} (in ${formatDuration(next - now)})`;
}

/** A share as a percentage with one decimal: `12.5%`. */
export function percent(share: number): string {
  return `${(Math.min(1, Math.max(0, share)) * 100).toFixed(1)}%`;
}

/** A span of slot seconds, as the other durations: `1h12m`, `45s`. */
export function slotTime(seconds: number): string {
  return formatDuration(seconds * 1000);
}

/** A kind's tasks of the hour: `40 tasks, 3 failed`. */
export function kindTasks(k: KindCapacity): string {
  return `${k.tasks} task${k.tasks === 1 ? '' : 's'}, ${k.failed_tasks} failed`;
}

/** A consumer's tasks of the hour: `4 tasks` or `4 tasks, 4 failed`. */
export function useTasks(u: StoreUse): string {
  const failed = u.failed_tasks > 0 ? `, ${u.failed_tasks} failed` : '';
  return `${u.tasks} task${u.tasks === 1 ? '' : 's'}${failed}`;
}

/**
 * How `room` lines go between the capacity and the causes sections: each first its blank line,
 * header and one line (capacity first), then the capacity all it wants, then the causes. -1: not
 * shown. Pure.
 */
export function splitInsights(
  room: number,
  want: { capacity: number; causes: number },
): {
  capacity: number;
  causes: number;
} {
  const out = { capacity: -1, causes: -1 };
  let left = room;
  for (const k of ['capacity', 'causes'] as const) {
    if (want[k] <= 0 || left < 3) continue;
    out[k] = 1;
    left -= 3;
  }
  for (const k of ['capacity', 'causes'] as const) {
    if (out[k] < 0) continue;
    const more = Math.min(left, want[k] - out[k]);
    out[k] += more;
    left -= more;
  }
  return out;
}
