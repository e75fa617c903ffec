import { type CooldownPolicy, cooldownState, cooldownWindowMs, isParked } from '@maintd/core';
import type { Cooldown, CooldownState, Policy } from '../api/types.js';
import { formatAgo, formatDuration, formatUntil } from '../format.js';
import { parkedItems } from '../common/action-items.js';
import { cooldownKey } from '../common/cooldown-key.js';
import { causeOf, countText, timeLeft } from '../common/cooldown-text.js';
import type { Tone } from '../theme.js';
import type { Cell } from './columns.js';
import { type ListSpec, byText } from './list-spec.js';

/** The policy in the shape of core's cooldown functions. */
export function corePolicy(p: Policy): CooldownPolicy {
  return {
    afterFailures: p.threshold,
    baseSecs: p.base_secs,
    maxSecs: p.max_secs,
    jitter: p.jitter,
    kinds: p.kinds,
    maxPercent: p.guard_percent,
    countInfrastructure: p.count_infrastructure_failures,
  };
}

const STATE_TONES: Readonly<Record<CooldownState, Tone>> = {
  parked: 'info',
  cooling: 'bad',
  below: 'warn',
  lapsed: 'muted',
};

/**
 * The state of an entry at `now`, as a cell: parked, cooling, below (the threshold) or lapsed; or,
 * when the master served a state of a later release, that state as it came, with no tone.
 */
export function stateCell(c: Cooldown, now: number): { text: string; tone: Tone | undefined } {
  // The served `state` is a string whatever the document's enum says: one this dashboard does not
  // know says something its own reading of the record cannot, so it is shown as it is.
  const served: string = c.state;
  if (!Object.hasOwn(STATE_TONES, served)) return { text: served, tone: undefined };
  // Never undefined: there is a record. Worked out at `now`, not taken from the served `state`:
  // a window ends and a park lapses without an event.
  const state = cooldownState(c, c.parked, now)!;
  return { text: state, tone: notGating(c, now) ? 'muted' : STATE_TONES[state] };
}

/**
 * Whether the master said this entry gates nothing though it reads as cooling: a window of a kind
 * its policy no longer counts (the cooldown turned off, or the kind left out). A master that
 * predates `gating` does not say: then this is false, and nothing is marked.
 */
export function notGating(c: Cooldown, now: number): boolean {
  // `gating` is absent from a 0.1.0 master's answer, whatever the document's type says.
  const gating = (c as { gating?: boolean }).gating;
  return gating === false && cooldownState(c, c.parked, now) === 'cooling';
}

/** The detail pane's word on an entry that gates nothing; undefined when it gates (or nobody said). */
export function gatingText(c: Cooldown, now: number): string | undefined {
  if (!notGating(c, now)) return undefined;
  return `not gating: the master's policy does not count ${c.kind} (turned off, or the kind left out), so this window holds nothing back; it stays listed until it lapses`;
}

/** When the park or window ends, in local time (`14:03:07`, or `11-16 09:12` on another day). */
export function untilText(c: Cooldown, now: number): string {
  const end = isParked(c.parked, now) ? c.parked?.until_ms : c.until_ms;
  return end == null ? '-' : formatUntil(end, now);
}

/**
 * The window a next failure would open, by core's own formula (jitter included, so the same
 * length the master will pick); undefined when it would open none (below the threshold, a kind
 * not counted, no policy known).
 */
export function nextWindowMs(c: Cooldown, policy: Policy | undefined): number | undefined {
  if (!policy || !policy.kinds.includes(c.kind)) return undefined;
  const ms = cooldownWindowMs(corePolicy(policy), c.kind, c.target, c.failures + 1);
  return ms > 0 ? ms : undefined;
}

/** What the CAUSE column shows: the park's reason when parked, else the failure's cause. */
export function causeCell(c: Cooldown, now: number): Cell {
  if (isParked(c.parked, now) && c.parked)
    return { text: `${c.parked.reason} (parked by ${c.parked.by})`, tone: 'info' };
  if (notGating(c, now)) return { text: `not gating · ${causeOf(c.last_error)}`, tone: 'muted' };
  return { text: causeOf(c.last_error), tone: 'bad' };
}

/** The Cooldowns view: what the sweeps skip and why, with counters below the threshold. */
export const COOLDOWNS: ListSpec<Cooldown> = {
  id: 'cooldowns',
  noun: 'cooldowns',
  source: (d) => d.cooldowns,
  key: (c) => cooldownKey(c.kind, c.target),
  // The master's `q=` (docs/ARCHITECTURE.md §3.4): what a bulk action sends matches these rows.
  query: (c) => [c.target, c.last_error],
  search: (c) =>
    `${c.kind} ${c.target} ${c.state} ${c.last_error_class ?? ''} ${c.last_error} ${c.parked?.reason ?? ''}`.toLowerCase(),
  sorts: [
    // By the end of the window, not the time left: the order then holds while the clock ticks.
    {
      label: 'time left',
      compare: (a, b) =>
        (b.until_ms ?? -1) - (a.until_ms ?? -1) || b.failures - a.failures || byText(a.target, b.target),
    },
    { label: 'failures', compare: (a, b) => b.failures - a.failures || byText(a.target, b.target) },
    {
      label: 'last failure',
      compare: (a, b) => (b.last_failure_ms ?? 0) - (a.last_failure_ms ?? 0) || byText(a.target, b.target),
    },
    { label: 'target', compare: (a, b) => byText(a.target, b.target) || byText(a.kind, b.kind) },
  ],
  columns: [
    { title: 'KIND', width: 9, cell: (c) => ({ text: c.kind }) },
    { title: 'TARGET', width: 22, cell: (c) => ({ text: c.target }) },
    { title: 'STATE', width: 7, cell: (c, x) => stateCell(c, x.now) },
    // The count against the threshold: `4/3`.
    {
      title: 'FAILS',
      width: 5,
      align: 'right',
      cell: (c, x) => ({ text: countText(c, x.data.policy) }),
    },
    { title: 'LEFT', width: 7, align: 'right', cell: (c, x) => ({ text: timeLeft(c, x.now) }) },
    { title: 'UNTIL', width: 11, align: 'right', drop: 2, cell: (c, x) => ({ text: untilText(c, x.now) }) },
    {
      title: 'NEXT',
      width: 6,
      align: 'right',
      drop: 3,
      cell: (c, x) => {
        const next = nextWindowMs(c, x.data.policy);
        return { text: next === undefined ? '-' : formatDuration(next) };
      },
    },
    // Narrow terminals drop the age of the last failure first: until when and the next window
    // say more about what the sweeps will do.
    {
      title: 'LAST FAIL',
      width: 10,
      align: 'right',
      drop: 4,
      cell: (c, x) => ({ text: c.last_failure_ms === undefined ? '-' : formatAgo(c.last_failure_ms, x.now) }),
    },
    // The column the view is for: at least 20 wide, the rest of the terminal on wider ones.
    { title: 'CAUSE', width: 20, flex: true, cell: (c, x) => causeCell(c, x.now) },
  ],
  actions: {
    run: (c) => [{ kind: c.kind, target: c.target }],
    reset: (c) => [{ kind: c.kind, target: c.target }],
    park: (c) => [{ kind: c.kind, target: c.target }],
    release: (c, _d, now) => parkedItems([c], now),
  },
  empty: 'no cooldowns: no store is failing',
};
