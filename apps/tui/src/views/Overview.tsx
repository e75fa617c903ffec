import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import type { Cooldown, Master, Task, TaskKind } from '../api/types.js';
import { formatAgo, formatCount, formatDuration, fit, truncate } from '../format.js';
import { isParked } from '@maintd/core';
import type { Activity } from '../state/activity.js';
import { coolingByKind, isCooling } from '../state/fleet.js';
import type { FleetData, KindCounts } from '../state/fleet-data.js';
import { byKind, fleetKinds } from '../state/kinds.js';
import { toneColor, useTheme } from '../theme.js';
import { causeOf, countText, timeLeft } from '../common/cooldown-text.js';
import { stateTone, taskOutcome, taskTiming } from './tasks.js';
import { workerHealth } from './workers.js';
import { Insights, Windows, insightsWant } from './OverviewInsights.js';
import { splitInsights } from './insights.js';

/** Outcomes counted as "recent" (throughput) on the Overview. */
export const RECENT_WINDOW_MS = 5 * 60_000;
/** Worst offenders listed. */
export const OFFENDERS = 5;
/** Finished tasks kept for the outcomes list (more never fit on a screen). */
const OUTCOMES_KEPT = 60;

/** A text gauge of `value` out of `max`: `▮▮▮▯▯▯▯▯▯▯`. */
export function gauge(value: number, max: number, width: number): string {
  const filled = max > 0 ? Math.min(width, Math.round((value / max) * width)) : 0;
  return '▮'.repeat(filled) + '▯'.repeat(width - filled);
}

/** Everything the Overview shows, computed from the data at one time. */
export interface OverviewModel {
  readonly masters: readonly Master[] | undefined;
  readonly workers: { readonly ok: number; readonly failing: number; readonly unknown: number };
  /** The kinds shown, a line each (`fleetKinds`: the masters' registrations, the policy, the records). */
  readonly kinds: readonly TaskKind[];
  readonly counts: Readonly<Record<TaskKind, KindCounts>> | undefined;
  readonly tasksLoaded: boolean;
  readonly cooldownsLoaded: boolean;
  readonly storesLoaded: boolean;
  /** Done and failed in the last {@link RECENT_WINDOW_MS}, per kind. */
  readonly recent: Readonly<Record<TaskKind, { readonly done: number; readonly failed: number }>>;
  readonly cooling: Readonly<Record<TaskKind, { cooling: number; stores: number; percent: number }>>;
  readonly guardOverflow: Readonly<Record<TaskKind, number>> | undefined;
  /** The fleet guard the cooling share is shown against: the override, else the master's policy, else 25. */
  readonly guardPercent: number;
  readonly running: readonly Task[];
  /** Finished tasks, latest first. */
  readonly finished: readonly Task[];
  /** The entries holding the sweeps back the most (not parked): longest cooling, then most failures. */
  readonly offenders: readonly Cooldown[];
  /** Entries parked now, latest park first. */
  readonly parked: readonly Cooldown[];
  readonly policy: FleetData['policy'];
  /** The last hour's slot time (`unsupported`: a master that predates it). */
  readonly capacity: FleetData['capacity'];
  /** The causes of failures, the most stores first. */
  readonly causes: FleetData['causes'];
  readonly insightsError: string | undefined;
}

/** The order of offenders: open windows first, the longest first, then the most failures. */
function worse(a: Cooldown, b: Cooldown, now: number): boolean {
  const ca = isCooling(a, now);
  const cb = isCooling(b, now);
  if (ca !== cb) return ca;
  if (ca && a.until_ms !== b.until_ms) return (a.until_ms ?? 0) > (b.until_ms ?? 0);
  if (a.failures !== b.failures) return a.failures > b.failures;
  return a.target < b.target;
}

/**
 * The Overview's content, in one pass over the cooldowns (10,000 of them cost about a
 * millisecond) and one over the tasks. Pure.
 */
export function overviewModel(data: FleetData, now: number, guardOverride?: number): OverviewModel {
  const workers = { ok: 0, failing: 0, unknown: 0 };
  for (const w of data.workers ?? []) workers[workerHealth(w).text as keyof typeof workers]++;
  const tasks = data.tasks ? [...data.tasks.values()] : [];
  const running = tasks.filter((t) => t.state === 'running').sort((a, b) => (a.id < b.id ? -1 : 1));
  const finished = tasks
    .filter((t) => t.state === 'done' || t.state === 'failed')
    .sort((a, b) => (b.finished_at ?? 0) - (a.finished_at ?? 0))
    .slice(0, OUTCOMES_KEPT);
  const kinds = fleetKinds(data);
  const recent = byKind<{ done: number; failed: number }>();
  for (const k of kinds) recent[k] = { done: 0, failed: 0 };
  for (const t of tasks) {
    if ((t.state === 'done' || t.state === 'failed') && (t.finished_at ?? 0) >= now - RECENT_WINDOW_MS) {
      (recent[t.kind] ??= { done: 0, failed: 0 })[t.state === 'done' ? 'done' : 'failed']++;
    }
  }
  const offenders: Cooldown[] = [];
  const parked: Cooldown[] = [];
  for (const c of data.cooldowns?.values() ?? []) {
    if (isParked(c.parked, now)) {
      parked.push(c);
      continue;
    }
    // A sorted insert into five: no sort of 10,000.
    if (offenders.length === OFFENDERS && !worse(c, offenders[OFFENDERS - 1]!, now)) continue;
    let i = offenders.length;
    while (i > 0 && worse(c, offenders[i - 1]!, now)) i--;
    offenders.splice(i, 0, c);
    if (offenders.length > OFFENDERS) offenders.pop();
  }
  parked.sort((a, b) => (b.parked?.parked_at_ms ?? 0) - (a.parked?.parked_at_ms ?? 0));
  return {
    masters: data.masters,
    workers,
    kinds,
    counts: data.counts,
    tasksLoaded: data.tasks !== undefined,
    cooldownsLoaded: data.cooldowns !== undefined,
    storesLoaded: data.stores !== undefined,
    recent,
    cooling: coolingByKind(data, now),
    guardOverflow: data.guardOverflow,
    guardPercent: guardOverride ?? data.policy?.guard_percent ?? 25,
    running,
    finished,
    offenders,
    parked,
    policy: data.policy,
    capacity: data.capacity,
    causes: data.causes,
    insightsError: data.insightsError,
  };
}

/** Whether two models show the same: the App draws no frame for a change that leaves it alike. */
export function sameOverview(a: OverviewModel, b: OverviewModel): boolean {
  return same(a, b, 0);
}

function same(a: unknown, b: unknown, depth: number): boolean {
  if (Object.is(a, b)) return true;
  // Records from the master are compared by identity: a changed one is a new object.
  if (depth > 2 || typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => Object.is(x, b[i]));
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], depth + 1));
}

/** Props of {@link Overview}. */
export interface OverviewProps {
  readonly model: OverviewModel;
  /** The activity log: parks and releases seen on the stream and the operator's actions, newest last. */
  readonly activity: readonly Activity[];
  readonly now: number;
  readonly width: number;
  readonly height: number;
  /** Key of the selected capacity consumer or cause (common/overview-rows.ts). */
  readonly selected?: string | undefined;
}

/** Lines of each flexible section after its blank line and header, by priority. */
interface Budget {
  offenders: number;
  parked: number;
  running: number;
  activity: number;
  outcomes: number;
}

/**
 * How the lines left after the fixed sections go: every section first gets its header and one
 * line (in priority order, while there is room), then each up to what it wants, the rest to the
 * recent outcomes. Pure.
 */
export function overviewBudget(
  room: number,
  want: { offenders: number; parked: number; running: number; activity: number },
): Budget {
  const b: Budget = { offenders: 0, parked: 0, running: 0, activity: 0, outcomes: 0 };
  const order: (keyof Budget)[] = ['offenders', 'parked', 'running', 'activity', 'outcomes'];
  const shown = new Set<keyof Budget>();
  let left = room;
  for (const k of order) {
    // Sections with nothing to list stay off the screen (the running one says "nothing running").
    if ((k === 'parked' || k === 'activity') && want[k] === 0) continue;
    if (left < 3) break;
    shown.add(k);
    b[k] = 1;
    left -= 3;
  }
  for (const k of ['offenders', 'parked', 'running', 'activity'] as const) {
    if (!shown.has(k)) continue;
    const more = Math.min(left, Math.max(0, want[k] - b[k]));
    b[k] += more;
    left -= more;
  }
  if (shown.has('outcomes')) b.outcomes += left;
  for (const k of order) if (!shown.has(k)) b[k] = -1;
  return b;
}

/**
 * The fleet at a glance: masters, queue and running per kind, recent throughput, the cooling
 * share against the fleet guard, the worst offenders, parked stores, running tasks, the activity
 * log and the latest outcomes.
 */
export function Overview({ model: m, activity, now, width, height, selected }: OverviewProps): ReactNode {
  const theme = useTheme();
  const masters = m.masters ?? [];
  const guard = m.guardPercent;

  // Fixed sections first; the others share what is left.
  const mastersShown = masters.slice(0, 3);
  const mastersLines = 1 + Math.max(1, mastersShown.length) + (masters.length > mastersShown.length ? 1 : 0);
  const kindLines = 2 * (2 + m.kinds.length); // blank, header and a line per kind, twice
  const windows = m.policy?.windows ?? [];
  const windowLines = windows.length > 0 ? 2 + windows.length : 0;
  const budget = overviewBudget(Math.max(0, height - mastersLines - kindLines - windowLines), {
    offenders: Math.max(1, m.offenders.length),
    parked: Math.min(m.parked.length, 5) + (m.parked.length > 5 ? 1 : 0),
    running: Math.max(1, m.running.length),
    activity: Math.min(activity.length, 5),
  });
  // The capacity and the causes come before the recent outcomes, from the lines those would get:
  // the sections above keep what they had.
  const insightsData = { capacity: m.capacity, causes: m.causes, error: m.insightsError };
  const spare = budget.outcomes < 0 ? 0 : budget.outcomes + 2;
  const insightRows = splitInsights(spare, insightsWant(insightsData));
  const insightLines =
    (insightRows.capacity < 0 ? 0 : insightRows.capacity + 2) + (insightRows.causes < 0 ? 0 : insightRows.causes + 2);
  if (budget.outcomes >= 0) budget.outcomes = spare - insightLines < 3 ? -1 : spare - insightLines - 2;
  const line = (text: string): string => truncate(text, width - 2);
  const na = (v: number | undefined): string => (v === undefined ? '–' : formatCount(v));
  const runningRows = budget.running < 0 ? 0 : Math.min(m.running.length, budget.running);
  const cut = m.running.length > runningRows && runningRows > 0;
  const runningShown = cut ? runningRows - 1 : runningRows;

  return (
    <Box flexDirection="column" height={height} width={width} overflow="hidden">
      <Text bold wrap="truncate">
        {`Masters ${m.masters ? masters.length : '–'}`}
        <Text dimColor>{`   workers ${m.workers.ok} ok · `}</Text>
        <Text color={toneColor(theme, m.workers.failing > 0 ? 'bad' : undefined)} dimColor={m.workers.failing === 0}>
          {`${m.workers.failing} failing`}
        </Text>
        <Text dimColor>{` · ${m.workers.unknown} not scanned`}</Text>
      </Text>
      {mastersShown.length === 0 ? (
        <Text dimColor>{m.masters ? '  no master registered' : '  waiting for the master…'}</Text>
      ) : null}
      {mastersShown.map((x) => (
        <Text key={x.id} wrap="truncate">
          {line(
            `  ${fit(x.id, 28)} ${fit(x.host, 16)} v${fit(x.version, 8)} up ${fit(formatDuration(now - x.started_at), 8)} pools ${Object.entries(
              x.pools,
            )
              .map(([k, v]) => `${k} ${v}`)
              .join(' · ')}`,
          )}
        </Text>
      ))}
      {masters.length > mastersShown.length ? (
        <Text dimColor>{`  … ${masters.length - mastersShown.length} more`}</Text>
      ) : null}

      <Text> </Text>
      <Text bold wrap="truncate">
        {`${fit('Queue', 11)}${fit('queued', 8, 'right')}${fit('running', 9, 'right')}${fit('done 5m', 9, 'right')}${fit('failed 5m', 11, 'right')}`}
      </Text>
      {m.kinds.map((kind) => {
        const c = m.counts?.[kind];
        const r = m.recent[kind] ?? { done: 0, failed: 0 };
        return (
          <Text key={kind} wrap="truncate">
            {`  ${fit(kind, 9)}`}
            <Text color={toneColor(theme, c && c.queued > 0 ? 'info' : undefined)}>
              {fit(na(c?.queued), 8, 'right')}
            </Text>
            <Text color={toneColor(theme, c && c.running > 0 ? 'warn' : undefined)}>
              {fit(na(c?.running), 9, 'right')}
            </Text>
            <Text color={toneColor(theme, 'ok')}>{fit(m.tasksLoaded ? String(r.done) : '–', 9, 'right')}</Text>
            <Text color={toneColor(theme, r.failed > 0 ? 'bad' : undefined)}>
              {fit(m.tasksLoaded ? String(r.failed) : '–', 11, 'right')}
            </Text>
          </Text>
        );
      })}

      <Text> </Text>
      <Text bold wrap="truncate">
        {`${fit('Cooling', 11)}${fit('targets', 8, 'right')}  of stores   share vs guard ${guard}%`}
        <Text dimColor>{`${' '.repeat(8)}guard overflows`}</Text>
      </Text>
      {m.kinds.map((kind) => {
        const c = m.cooling[kind] ?? { cooling: 0, stores: 0, percent: 0 };
        const over = c.percent > guard;
        const tone = over ? 'bad' : c.cooling > 0 ? 'warn' : 'ok';
        const overflow = m.guardOverflow?.[kind];
        return (
          <Text key={kind} wrap="truncate">
            {`  ${fit(kind, 9)}`}
            <Text color={toneColor(theme, c.cooling > 0 ? 'bad' : undefined)}>
              {fit(m.cooldownsLoaded ? formatCount(c.cooling) : '–', 8, 'right')}
            </Text>
            {`  ${fit(m.storesLoaded ? formatCount(c.stores) : '–', 8, 'right')}   `}
            <Text color={toneColor(theme, tone)}>{gauge(c.percent, guard, 10)}</Text>
            {` ${fit(`${c.percent.toFixed(1)}%`, 6, 'right')}${over ? ' OVER' : '     '}`}
            <Text color={toneColor(theme, overflow ? 'bad' : undefined)} dimColor={!overflow}>
              {fit(overflow === undefined ? '–' : formatCount(overflow), 17, 'right')}
            </Text>
          </Text>
        );
      })}

      <Windows windows={windows} now={now} width={width} />

      {budget.offenders >= 0 ? (
        <>
          <Text> </Text>
          <Text bold wrap="truncate">
            {'Worst offenders'}
            <Text dimColor>{'  longest cooling, most failures (3 Cooldowns)'}</Text>
          </Text>
          {m.offenders.length === 0 ? (
            <Text dimColor>{m.cooldownsLoaded ? '  none: nothing is failing' : '  loading…'}</Text>
          ) : null}
          {m.offenders.slice(0, budget.offenders).map((c) => (
            <Text key={`${c.kind}/${c.target}`} wrap="truncate">
              {`  ${fit(c.kind, 9)} ${fit(c.target, 22)} ${fit(countText(c, m.policy), 5, 'right')} `}
              <Text color={toneColor(theme, isCooling(c, now) ? 'bad' : 'warn')}>
                {fit(isCooling(c, now) ? timeLeft(c, now) : 'below', 7, 'right')}
              </Text>
              {'  '}
              <Text color={toneColor(theme, 'bad')}>{truncate(causeOf(c.last_error), Math.max(0, width - 52))}</Text>
            </Text>
          ))}
        </>
      ) : null}

      {budget.parked >= 0 ? (
        <>
          <Text> </Text>
          <Text bold>{`Parked ${m.parked.length}`}</Text>
          {m.parked.slice(0, m.parked.length > budget.parked ? budget.parked - 1 : budget.parked).map((c) => (
            <Text key={`${c.kind}/${c.target}`} wrap="truncate">
              {`  ${fit(c.kind, 9)} ${fit(c.target, 22)} `}
              <Text color={toneColor(theme, 'info')}>{truncate(c.parked?.reason ?? '', Math.max(0, width - 60))}</Text>
              <Text dimColor>{`  by ${c.parked?.by ?? '?'} ${formatAgo(c.parked?.parked_at_ms, now)}`}</Text>
            </Text>
          ))}
          {m.parked.length > budget.parked && budget.parked > 0 ? (
            <Text dimColor>{`  … ${m.parked.length - budget.parked + 1} more (3 Cooldowns, / parked)`}</Text>
          ) : null}
        </>
      ) : null}

      {budget.running >= 0 ? (
        <>
          <Text> </Text>
          <Text bold>{`Running ${m.tasksLoaded ? m.running.length : '–'}`}</Text>
          {m.running.length === 0 ? <Text dimColor>{'  nothing running'}</Text> : null}
          {m.running.slice(0, runningShown).map((t) => (
            <TaskLine key={t.id} task={t} now={now} width={width} />
          ))}
          {cut ? <Text dimColor>{`  … ${m.running.length - runningShown} more (2 Tasks)`}</Text> : null}
        </>
      ) : null}

      {budget.activity >= 0 ? (
        <>
          <Text> </Text>
          <Text bold>Activity</Text>
          {activity.slice(-budget.activity).map((a, i) => (
            <Text key={i} wrap="truncate">
              <Text dimColor>{`  ${fit(formatAgo(a.at, now), 11, 'right')}  `}</Text>
              <Text color={toneColor(theme, a.tone === 'info' ? undefined : a.tone)}>
                {truncate(a.text, Math.max(0, width - 16))}
              </Text>
            </Text>
          ))}
        </>
      ) : null}

      <Insights data={insightsData} selected={selected} rows={insightRows} width={width} />

      {budget.outcomes >= 0 ? (
        <>
          <Text> </Text>
          <Text bold>Recent outcomes</Text>
          {m.finished.length === 0 ? <Text dimColor>{'  none yet'}</Text> : null}
          {m.finished.slice(0, budget.outcomes).map((t) => (
            <TaskLine key={t.id} task={t} now={now} width={width} />
          ))}
        </>
      ) : null}
    </Box>
  );
}

function TaskLine({
  task: t,
  now,
  width,
}: {
  readonly task: Task;
  readonly now: number;
  readonly width: number;
}): ReactNode {
  const theme = useTheme();
  const mark = t.state === 'done' ? '✓' : t.state === 'failed' ? '✗' : '▶';
  const when = t.state === 'running' ? taskTiming(t, now) : formatAgo(t.finished_at, now);
  const outcome = t.state === 'failed' ? causeOf(taskOutcome(t)) : taskOutcome(t);
  return (
    <Text wrap="truncate">
      {'  '}
      <Text color={toneColor(theme, stateTone(t.state))}>{`${mark} ${fit(t.state, 7)}`}</Text>
      {` ${fit(t.kind, 9)} ${fit(t.target, 22)} ${fit(when, 11, 'right')}  `}
      <Text color={toneColor(theme, t.state === 'failed' ? 'bad' : undefined)} dimColor={t.state !== 'failed'}>
        {truncate(t.state === 'running' ? (t.owner ?? '') : outcome, Math.max(0, width - 60))}
      </Text>
    </Text>
  );
}
