import type { Task, TaskState } from '../api/types.js';
import { formatAgo, formatDuration } from '../format.js';
import { cooldownKey } from '../common/cooldown-key.js';
import type { Tone } from '../theme.js';
import { causeOf } from '../common/cooldown-text.js';
import { parkedItems } from '../common/action-items.js';
import { type ListSpec, byText } from './list-spec.js';

// `held`: an automatic task a park keeps back until it is released (docs/ARCHITECTURE.md §2.7),
// in a colour of its own: waiting, but not in the queue.
const TASK_TONES: Readonly<Record<TaskState, Tone>> = {
  queued: 'info',
  running: 'warn',
  done: 'ok',
  failed: 'bad',
  held: 'accent',
};

/**
 * The tone of a task state; none for a state of a later release (a string, whatever the
 * document's enum says), which is shown as it comes.
 */
export function stateTone(state: string): Tone | undefined {
  return Object.hasOwn(TASK_TONES, state) ? TASK_TONES[state as TaskState] : undefined;
}

const STATE_ORDER: Readonly<Record<TaskState, number>> = { running: 0, queued: 1, held: 2, failed: 3, done: 4 };

/** A state's place in the `state` sort: a later release's states after today's, by name. */
function stateRank(state: string): number {
  return Object.hasOwn(STATE_ORDER, state) ? STATE_ORDER[state as TaskState] : 5;
}

/** What a task says about its result: its error when failed, else its detail; why, when held. */
export function taskOutcome(t: Task): string {
  return t.error ?? t.detail ?? t.held_reason ?? '';
}

/** A task's age or run time: running for, took, or waiting for. */
export function taskTiming(t: Task, now: number): string {
  if (t.state === 'queued') return formatDuration(now - t.enqueued_at);
  if (t.state === 'running') return formatDuration(now - (t.started_at ?? t.enqueued_at));
  if (t.finished_at !== undefined && t.started_at !== undefined) return formatDuration(t.finished_at - t.started_at);
  return '-';
}

/** The Tasks view: the newest tasks and every active one, live. */
export const TASKS: ListSpec<Task> = {
  id: 'tasks',
  noun: 'tasks',
  source: (d) => d.tasks,
  key: (t) => t.id,
  query: (t) => [t.target, t.error ?? ''],
  search: (t) => `${t.state} ${t.kind} ${t.target} ${t.source} ${t.owner ?? ''} ${taskOutcome(t)}`.toLowerCase(),
  sorts: [
    { label: 'newest', compare: (a, b) => byText(b.id, a.id) },
    {
      label: 'state',
      compare: (a, b) => stateRank(a.state) - stateRank(b.state) || byText(a.state, b.state) || byText(b.id, a.id),
    },
    { label: 'target', compare: (a, b) => byText(a.target, b.target) || byText(b.id, a.id) },
    { label: 'kind', compare: (a, b) => byText(a.kind, b.kind) || byText(b.id, a.id) },
  ],
  columns: [
    { title: 'STATE', width: 7, cell: (t) => ({ text: t.state, tone: stateTone(t.state) }) },
    { title: 'KIND', width: 9, cell: (t) => ({ text: t.kind }) },
    { title: 'TARGET', width: 24, cell: (t) => ({ text: t.target }) },
    { title: 'SOURCE', width: 6, drop: 2, cell: (t) => ({ text: t.source }) },
    { title: 'TRY', width: 3, align: 'right', drop: 3, cell: (t) => ({ text: String(t.attempt) }) },
    { title: 'AGE', width: 11, align: 'right', drop: 1, cell: (t, c) => ({ text: formatAgo(t.enqueued_at, c.now) }) },
    { title: 'TIME', width: 7, align: 'right', cell: (t, c) => ({ text: taskTiming(t, c.now) }) },
    {
      title: 'OUTCOME',
      width: 12,
      flex: true,
      cell: (t) => ({
        text: t.state === 'failed' ? causeOf(taskOutcome(t)) : taskOutcome(t),
        tone: t.state === 'failed' ? 'bad' : undefined,
      }),
    },
  ],
  actions: {
    run: (t) => [{ kind: t.kind, target: t.target }],
    reset: (t, d) => (d.cooldowns?.has(cooldownKey(t.kind, t.target)) ? [{ kind: t.kind, target: t.target }] : []),
    park: (t) => [{ kind: t.kind, target: t.target }],
    release: (t, d, now) => parkedItems([d.cooldowns?.get(cooldownKey(t.kind, t.target))], now),
  },
  empty: 'no tasks yet',
};
