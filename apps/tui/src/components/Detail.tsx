import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import type { Cooldown, Store, Task, Worker } from '../api/types.js';
import { formatAgo, formatCount, formatDuration, formatLocal, truncate, wrap } from '../format.js';
import type { FleetData } from '../state/fleet-data.js';
import { cooldownKey } from '../common/cooldown-key.js';
import { type Tone, toneColor, useTheme } from '../theme.js';
import { gatingText, nextWindowMs, stateCell } from '../views/cooldowns.js';
import { causeOf, countText, timeLeft } from '../common/cooldown-text.js';
import type { ListViewId } from '../common/view-ids.js';
import { storeCooldowns } from '../views/stores.js';
import { stateTone, taskOutcome, taskTiming } from '../views/tasks.js';
import { workerHealth } from '../views/workers.js';
import { TimelineLines, type TimelineState } from './Timeline.js';

/** The task history of the detail pane's target, as loaded. */
export interface History {
  readonly target: string;
  readonly tasks: readonly Task[] | undefined;
  readonly error: string | undefined;
}

/** Props of {@link Detail}. */
export interface DetailProps {
  readonly view: ListViewId;
  readonly itemKey: string;
  readonly data: FleetData;
  readonly history: History | undefined;
  /** The timeline of a cooldown's pair (the Cooldowns view's pane). */
  readonly timeline?: TimelineState | undefined;
  readonly now: number;
  readonly width: number;
  readonly height: number;
}

const LABEL = 15;

type Line = {
  readonly label?: string;
  readonly text: string;
  readonly tone?: Tone | undefined;
  readonly bold?: boolean;
};

/**
 * The detail pane: one item in full (the whole last error, wrapped), live, and the recent task
 * history of its target.
 */
export function Detail(props: DetailProps): ReactNode {
  const theme = useTheme();
  const { data, now, width } = props;
  const inner = width - 4;
  let title: string;
  let lines: Line[];
  let target: string | undefined;
  const field = (label: string, text: string, tone?: Tone): Line => ({ label, text, tone });
  const long = (label: string, text: string, tone?: Tone): Line[] => {
    const rows = wrap(text || '–', inner - LABEL);
    return rows.map((r, i) => ({ ...(i === 0 ? { label } : { label: '' }), text: r, tone }));
  };

  if (props.view === 'cooldowns') {
    const c: Cooldown | undefined = data.cooldowns?.get(props.itemKey);
    const [kind, ...rest] = props.itemKey.split('/');
    target = c?.target ?? rest.join('/');
    title = `Cooldown ${kind} ${target}`;
    const next = c ? nextWindowMs(c, data.policy) : undefined;
    const park = c?.parked;
    const gating = c ? gatingText(c, now) : undefined;
    lines = c
      ? [
          field('state', stateCell(c, now).text, stateCell(c, now).tone),
          ...(gating ? long('gating', gating, 'muted') : []),
          ...(park
            ? [
                ...long('parked because', park.reason, 'info'),
                field(
                  'parked by',
                  `${park.by}, ${formatAgo(park.parked_at_ms, now)} (${formatLocal(park.parked_at_ms)})`,
                ),
                field(
                  'parked until',
                  park.until_ms === null ? 'released (u)' : `${formatLocal(park.until_ms)} (${timeLeft(c, now)} left)`,
                ),
              ]
            : []),
          field(
            'failures',
            `${countText(c, data.policy)}${data.policy ? ` (a window opens at ${data.policy.threshold})` : ''}`,
          ),
          field(
            'time left',
            c.until_ms !== null && c.until_ms > now ? formatDuration(c.until_ms - now + 999) : '-',
            'bad',
          ),
          field(
            'until',
            c.until_ms === null
              ? 'below the threshold: no window yet'
              : `${formatLocal(c.until_ms)}${c.until_ms <= now ? ' (lapsed: the count stays)' : ''}`,
          ),
          field(
            'next window',
            next === undefined
              ? data.policy
                ? 'none: below the threshold after one more failure'
                : 'unknown (the master serves no policy)'
              : `${formatDuration(next)} if it fails again`,
          ),
          // One line for the failures' times and class: the timeline below has each of them.
          field(
            'last failure',
            c.last_failure_ms === undefined
              ? '-'
              : `${formatAgo(c.last_failure_ms, now)} (first ${formatAgo(c.first_failure_ms, now)})${c.last_error_class ? ` · ${c.last_error_class}` : ''}`,
          ),
          ...long('cause', causeOf(c.last_error), 'bad'),
        ]
      : [field('state', 'cleared (reset, release, success or expiry)', 'ok')];
  } else if (props.view === 'tasks') {
    const t: Task | undefined = data.tasks?.get(props.itemKey);
    target = t?.target;
    title = t ? `Task ${t.kind} ${t.target}` : `Task ${props.itemKey}`;
    lines = t
      ? [
          field('id', t.id, 'muted'),
          field('state', t.state, stateTone(t.state)),
          field('source', t.source),
          field('attempt', String(t.attempt)),
          field('enqueued', formatAgo(t.enqueued_at, now)),
          field('started', formatAgo(t.started_at, now)),
          field('finished', formatAgo(t.finished_at, now)),
          field(t.state === 'running' ? 'running for' : 'took', taskTiming(t, now)),
          field('owner', t.owner ?? '–'),
          // Held by a park (docs/ARCHITECTURE.md §2.7): queued again when it is released.
          ...(t.held_at !== undefined
            ? [field('held', `${formatAgo(t.held_at, now)} (${formatLocal(t.held_at)})`, 'accent')]
            : []),
          ...(t.error_class ? [field('class', t.error_class)] : []),
          ...long(
            t.error ? 'error' : t.held_reason && !t.detail ? 'held because' : 'detail',
            taskOutcome(t),
            t.error ? 'bad' : t.held_reason && !t.detail ? 'accent' : undefined,
          ),
          ...cooldownLines(data.cooldowns?.get(cooldownKey(t.kind, t.target)), now),
        ]
      : [field('state', 'no longer in the recent history', 'muted')];
  } else if (props.view === 'stores') {
    const s: Store | undefined = data.stores?.find((x) => x.name === props.itemKey);
    target = props.itemKey;
    title = `Store ${props.itemKey}`;
    lines = s
      ? [
          field(
            'pending WAL',
            formatCount(s.pending_wal_generations),
            s.pending_wal_generations > 0 ? 'warn' : undefined,
          ),
          field('fragments', formatCount(s.fragment_count)),
          field('rows', formatCount(s.row_count)),
          field('owners', s.owners.join(', ') || '-'),
          // The master rewrites a stats row only when its numbers change.
          field('changed', `${formatAgo(s.scanned_at, now)} (when a scan last changed these numbers)`),
          field('scanned', ownersScan(s.owners, data, now)),
          ...storeCooldowns(s.name, data).flatMap((c) => cooldownLines(c, now)),
        ]
      : [field('state', 'no longer reported by any worker', 'muted')];
  } else {
    const w: Worker | undefined = data.workers?.find((x) => x.endpoint === props.itemKey);
    title = `Worker ${props.itemKey}`;
    lines = w
      ? [
          field('health', workerHealth(w).text, workerHealth(w).tone),
          field('stores', formatCount(w.stores)),
          field('last scan', formatAgo(w.last_scan_at, now)),
          ...long('error', w.error ?? '', 'bad'),
        ]
      : [field('state', 'no longer configured', 'muted')];
  }

  const history = target !== undefined && props.history?.target === target ? props.history : undefined;
  const room = props.height - 2 - lines.length - 2;
  const timeline = props.view === 'cooldowns' && props.timeline?.key === props.itemKey ? props.timeline : undefined;
  const [pairKind = ''] = props.itemKey.split('/');
  // The timeline replaces the task history; a master that predates it gets the history instead.
  const showHistory = target !== undefined && room > 0 && (!timeline || timeline.status === 'unsupported');
  return (
    <Box flexDirection="column" height={props.height} width={width} borderStyle="single" paddingX={1}>
      <Text bold wrap="truncate">
        {truncate(title, inner - 12)}
        <Text dimColor>{'  Esc back'}</Text>
      </Text>
      {lines.slice(0, props.height - 3).map((l, i) => (
        <Text key={i} wrap="truncate">
          <Text dimColor>{(l.label ?? '').padEnd(LABEL)}</Text>
          <Text color={toneColor(theme, l.tone)} bold={l.bold ?? false}>
            {l.text}
          </Text>
        </Text>
      ))}
      {timeline && target !== undefined && room > 0 ? (
        <TimelineLines
          state={timeline}
          kind={pairKind}
          target={target}
          live={data.timeline}
          now={now}
          rows={timeline.status === 'unsupported' ? 2 : room}
          width={inner}
        />
      ) : null}
      {showHistory ? (
        <HistoryLines history={history} now={now} rows={timeline ? room - 3 : room} width={inner} />
      ) : null}
    </Box>
  );
}

/** When the store's owners were last scanned (the freshness of its numbers). */
function ownersScan(owners: readonly string[], data: FleetData, now: number): string {
  const scans = (data.workers ?? []).filter((w) => owners.includes(w.endpoint)).map((w) => w.last_scan_at);
  const known = scans.filter((t): t is number => typeof t === 'number');
  if (known.length === 0) return '-';
  return `${formatAgo(Math.min(...known), now)} (its workers' last scan)`;
}

function cooldownLines(c: Cooldown | undefined, now: number): Line[] {
  if (!c) return [];
  const state = stateCell(c, now);
  const why =
    state.text === 'parked' ? `parked by ${c.parked?.by ?? '?'}: ${c.parked?.reason ?? ''}` : causeOf(c.last_error);
  return [
    {
      label: `${c.kind}`,
      text: `${state.text} · ${c.failures} failure${c.failures === 1 ? '' : 's'} · ${timeLeft(c, now)} left · ${why}`,
      tone: state.tone,
    },
  ];
}

function HistoryLines(props: {
  readonly history: History | undefined;
  /** The timeline of a cooldown's pair (the Cooldowns view's pane). */
  readonly timeline?: TimelineState | undefined;
  readonly now: number;
  readonly rows: number;
  readonly width: number;
}): ReactNode {
  const theme = useTheme();
  const h = props.history;
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold>History of this target</Text>
      {!h || (!h.tasks && !h.error) ? <Text dimColor>loading…</Text> : null}
      {h?.error ? <Text color={toneColor(theme, 'bad')}>{truncate(h.error, props.width)}</Text> : null}
      {h?.tasks && h.tasks.length === 0 ? <Text dimColor>no tasks</Text> : null}
      {(h?.tasks ?? []).slice(0, Math.max(0, props.rows - 1)).map((t) => (
        <Text key={t.id} wrap="truncate">
          <Text color={toneColor(theme, stateTone(t.state))}>{t.state.padEnd(8)}</Text>
          {`${t.kind.padEnd(10)}${formatAgo(t.finished_at ?? t.started_at ?? t.enqueued_at, props.now).padStart(12)}  `}
          {`${formatDuration(t.finished_at !== undefined && t.started_at !== undefined ? t.finished_at - t.started_at : 0).padStart(6)}  `}
          <Text dimColor>{taskOutcome(t)}</Text>
        </Text>
      ))}
    </Box>
  );
}
