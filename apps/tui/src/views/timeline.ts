import type { TimelineEvent } from '../api/types.js';
import { formatDuration, formatUntil } from '../format.js';
import type { Tone } from '../theme.js';
import { causeOf } from '../common/cooldown-text.js';

/** One timeline event as the detail pane shows it: what happened, and who, why or which error. */
export interface EventLine {
  /** The event's type as it came (a later release's too). */
  readonly type: string;
  readonly text: string;
  readonly tone: Tone | undefined;
}

/** `4 failures`, `1 failure`. */
function failuresText(n: number | undefined): string {
  return n === undefined ? '' : `${n} failure${n === 1 ? '' : 's'}`;
}

/** A park's or a window's end: `until 14:03:07`, `until released`. */
function untilText(untilMs: number | null | undefined, now: number): string {
  if (untilMs === null) return 'until released';
  return untilMs === undefined ? '' : `until ${formatUntil(untilMs, now)}`;
}

const join = (...parts: (string | undefined)[]): string => parts.filter(Boolean).join(' · ');

/** `by ops@10.0.0.7`; empty when nobody is named. */
const byText = (e: TimelineEvent): string => (e.by ? `by ${e.by}` : '');

/**
 * What the detail pane says of one event (docs/ARCHITECTURE.md §2.7): a failure's error cause
 * first, a window's length and end, who reset, parked, released or ran it and why. A type of a
 * later release is shown as it came, with whatever it carries.
 */
export function describeEvent(e: TimelineEvent, now: number): EventLine {
  switch (e.type) {
    case 'failure':
      return {
        type: e.type,
        text: join(
          e.failures === undefined ? 'not counted' : `#${e.failures}`,
          e.error_class,
          e.error === undefined ? undefined : causeOf(e.error),
        ),
        tone: 'bad',
      };
    case 'window_opened':
      return {
        type: e.type,
        text: join(
          e.window_ms === undefined ? undefined : `${formatDuration(e.window_ms)} window`,
          untilText(e.until_ms, now),
          `after ${failuresText(e.failures)}`,
        ),
        tone: 'bad',
      };
    case 'window_lapsed':
      return { type: e.type, text: join('the window ended; the count stays', failuresText(e.failures)), tone: 'muted' };
    case 'cleared':
      return { type: e.type, text: join(`a success cleared ${failuresText(e.failures) || 'the count'}`), tone: 'ok' };
    case 'reset':
      return { type: e.type, text: join(byText(e), failuresText(e.failures)), tone: 'warn' };
    case 'parked':
      return { type: e.type, text: join(byText(e), e.reason, untilText(e.until_ms, now)), tone: 'info' };
    case 'released':
      return { type: e.type, text: join(byText(e)), tone: 'ok' };
    case 'manual_run':
      return { type: e.type, text: join(byText(e), e.task_id ? `task ${e.task_id}` : undefined), tone: 'info' };
    case 'held':
      return {
        type: e.type,
        text: join(e.task_id ? `task ${e.task_id} held` : 'a task held', byText(e), e.reason),
        tone: 'accent',
      };
    default:
      return {
        type: e.type,
        text: join(
          byText(e),
          e.reason,
          e.error === undefined ? undefined : causeOf(e.error),
          failuresText(e.failures),
          untilText(e.until_ms, now),
        ),
        tone: undefined,
      };
  }
}

/** One event's identity: a derived `window_lapsed` shares the id of the window it ends. */
const identity = (e: TimelineEvent): string => `${e.id}/${e.type}`;

/**
 * The timeline of one (kind, store) as the detail pane shows it, newest first: the events its
 * detail answer held, and those the event stream brought since (for this pair only), each once.
 */
export function mergeTimeline(
  kind: string,
  target: string,
  read: readonly TimelineEvent[],
  live: readonly TimelineEvent[],
): TimelineEvent[] {
  const seen = new Set<string>();
  const out: TimelineEvent[] = [];
  for (const e of [...read, ...live]) {
    if (e.kind !== kind || e.target !== target || seen.has(identity(e))) continue;
    seen.add(identity(e));
    out.push(e);
  }
  // Newest first; a tie (a failure and the window it opened commit together) by id, which is
  // the commit order within a millisecond.
  return out.sort((a, b) => b.at_ms - a.at_ms || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}
