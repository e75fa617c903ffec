import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import { type Task, TASK_KINDS } from '../api/types.js';
import { formatAgo, formatCount, formatDuration, fit, truncate } from '../format.js';
import { type FleetData, coolingByKind } from '../state/fleet.js';
import { toneColor, useTheme } from '../theme.js';
import { stateTone, taskOutcome, taskTiming, workerHealth } from './specs.js';

/** Props of {@link Overview}. */
export interface OverviewProps {
  readonly data: FleetData;
  readonly now: number;
  readonly width: number;
  readonly height: number;
  /** The fleet guard (TASK_COOLDOWN_MAX_PERCENT) the cooling share is shown against. */
  readonly guardPercent: number;
}

/** Outcomes counted as "recent" (throughput) on the Overview. */
export const RECENT_WINDOW_MS = 5 * 60_000;

/** A text gauge of `value` out of `max`: `▮▮▮▯▯▯▯▯▯▯`. */
export function gauge(value: number, max: number, width: number): string {
  const filled = max > 0 ? Math.min(width, Math.round((value / max) * width)) : 0;
  return '▮'.repeat(filled) + '▯'.repeat(width - filled);
}

/**
 * The fleet at a glance: masters, queue and running per kind, recent throughput, the cooling
 * share against the fleet guard, running tasks and the latest outcomes.
 */
export function Overview({ data, now, width, height, guardPercent }: OverviewProps): ReactNode {
  const theme = useTheme();
  const masters = data.masters ?? [];
  const workers = data.workers ?? [];
  const tasks = data.tasks ? [...data.tasks.values()] : [];
  const running = tasks.filter((t) => t.state === 'running').sort((a, b) => (a.id < b.id ? -1 : 1));
  const finished = tasks
    .filter((t) => t.state === 'done' || t.state === 'failed')
    .sort((a, b) => (b.finished_at ?? 0) - (a.finished_at ?? 0));
  const recent = finished.filter((t) => (t.finished_at ?? 0) >= now - RECENT_WINDOW_MS);
  const cooling = coolingByKind(data, now);
  const workersBy = { ok: 0, failing: 0, unknown: 0 };
  for (const w of workers) workersBy[workerHealth(w).text as keyof typeof workersBy]++;

  // Fixed sections first; running tasks and outcomes share what is left.
  const mastersShown = masters.slice(0, 3);
  const mastersLines = 1 + Math.max(1, mastersShown.length) + (masters.length > mastersShown.length ? 1 : 0);
  const kindLines = 2 * (2 + TASK_KINDS.length); // blank, header and a line per kind, twice
  // Running: blank + header; outcomes: blank + header.
  const budget = Math.max(0, height - mastersLines - kindLines - 4);
  const runningRows = Math.min(running.length, Math.max(1, Math.floor(budget / 2)));
  const runningLines = Math.max(1, runningRows) + (running.length > runningRows ? 1 : 0);
  const outcomeRows = Math.max(0, budget - runningLines);
  const line = (text: string): string => truncate(text, width - 2);
  const na = (v: number | undefined): string => (v === undefined ? '–' : formatCount(v));

  return (
    <Box flexDirection="column" height={height} width={width} overflow="hidden">
      <Text bold wrap="truncate">
        {`Masters ${data.masters ? masters.length : '–'}`}
        <Text dimColor>{`   workers ${workersBy.ok} ok · `}</Text>
        <Text color={toneColor(theme, workersBy.failing > 0 ? 'bad' : undefined)} dimColor={workersBy.failing === 0}>
          {`${workersBy.failing} failing`}
        </Text>
        <Text dimColor>{` · ${workersBy.unknown} not scanned`}</Text>
      </Text>
      {mastersShown.length === 0 ? (
        <Text dimColor>{data.masters ? '  no master registered' : '  waiting for the master…'}</Text>
      ) : null}
      {mastersShown.map((m) => (
        <Text key={m.id} wrap="truncate">
          {line(
            `  ${fit(m.id, 28)} ${fit(m.host, 16)} v${fit(m.version, 8)} up ${fit(formatDuration(now - m.started_at), 8)} pools ${Object.entries(
              m.pools,
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
      {TASK_KINDS.map((kind) => {
        const c = data.counts?.[kind];
        const done = recent.filter((t) => t.kind === kind && t.state === 'done').length;
        const failed = recent.filter((t) => t.kind === kind && t.state === 'failed').length;
        return (
          <Text key={kind} wrap="truncate">
            {`  ${fit(kind, 9)}`}
            <Text color={toneColor(theme, c && c.queued > 0 ? 'info' : undefined)}>
              {fit(na(c?.queued), 8, 'right')}
            </Text>
            <Text color={toneColor(theme, c && c.running > 0 ? 'warn' : undefined)}>
              {fit(na(c?.running), 9, 'right')}
            </Text>
            <Text color={toneColor(theme, 'ok')}>{fit(data.tasks ? String(done) : '–', 9, 'right')}</Text>
            <Text color={toneColor(theme, failed > 0 ? 'bad' : undefined)}>
              {fit(data.tasks ? String(failed) : '–', 11, 'right')}
            </Text>
          </Text>
        );
      })}

      <Text> </Text>
      <Text bold wrap="truncate">
        {`${fit('Cooling', 11)}${fit('targets', 8, 'right')}  of stores   share vs guard ${guardPercent}%`}
        <Text dimColor>{`${' '.repeat(8)}guard overflows`}</Text>
      </Text>
      {TASK_KINDS.map((kind) => {
        const c = cooling[kind];
        const over = c.percent > guardPercent;
        const tone = over ? 'bad' : c.cooling > 0 ? 'warn' : 'ok';
        const overflow = data.guardOverflow?.[kind];
        return (
          <Text key={kind} wrap="truncate">
            {`  ${fit(kind, 9)}`}
            <Text color={toneColor(theme, c.cooling > 0 ? 'bad' : undefined)}>
              {fit(data.cooldowns ? formatCount(c.cooling) : '–', 8, 'right')}
            </Text>
            {`  ${fit(data.stores ? formatCount(c.stores) : '–', 8, 'right')}   `}
            <Text color={toneColor(theme, tone)}>{gauge(c.percent, guardPercent, 10)}</Text>
            {` ${fit(`${c.percent.toFixed(1)}%`, 6, 'right')}${over ? ' OVER' : '     '}`}
            <Text color={toneColor(theme, overflow ? 'bad' : undefined)} dimColor={!overflow}>
              {fit(overflow === undefined ? '–' : formatCount(overflow), 17, 'right')}
            </Text>
          </Text>
        );
      })}

      <Text> </Text>
      <Text bold>{`Running ${data.tasks ? running.length : '–'}`}</Text>
      {running.length === 0 ? <Text dimColor>{'  nothing running'}</Text> : null}
      {running.slice(0, runningRows).map((t) => (
        <TaskLine key={t.id} task={t} now={now} width={width} />
      ))}
      {running.length > runningRows && runningRows > 0 ? (
        <Text dimColor>{`  … ${running.length - runningRows} more (2 Tasks)`}</Text>
      ) : null}

      <Text> </Text>
      <Text bold>Recent outcomes</Text>
      {finished.length === 0 ? <Text dimColor>{'  none yet'}</Text> : null}
      {finished.slice(0, outcomeRows).map((t) => (
        <TaskLine key={t.id} task={t} now={now} width={width} />
      ))}
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
  return (
    <Text wrap="truncate">
      {'  '}
      <Text color={toneColor(theme, stateTone(t.state))}>{`${mark} ${fit(t.state, 7)}`}</Text>
      {` ${fit(t.kind, 9)} ${fit(t.target, 22)} ${fit(when, 11, 'right')}  `}
      <Text color={toneColor(theme, t.state === 'failed' ? 'bad' : undefined)} dimColor={t.state !== 'failed'}>
        {truncate(t.state === 'running' ? (t.owner ?? '') : taskOutcome(t), Math.max(0, width - 60))}
      </Text>
    </Text>
  );
}
