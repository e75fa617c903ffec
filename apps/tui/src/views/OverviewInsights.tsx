import { Text } from 'ink';
import type { ReactNode } from 'react';
import type { Capacity, FailureCause, MaintenanceWindow } from '../api/types.js';
import { causeOf } from '../common/cooldown-text.js';
import { TOP_CAUSES, TOP_CONSUMERS, causeKey, consumerKey } from '../common/overview-rows.js';
import { fit, formatCount, truncate } from '../format.js';
import { toneColor, useTheme } from '../theme.js';
import { kindTasks, percent, slotTime, useTasks, windowText } from './insights.js';

/** The capacity and causes as the fleet data holds them. */
export interface InsightsData {
  readonly capacity: Capacity | 'unsupported' | undefined;
  readonly causes: readonly FailureCause[] | 'unsupported' | undefined;
  readonly error: string | undefined;
}

/** One line of a section: its key when it can be selected. */
interface Line {
  readonly key: string;
  readonly selectable: boolean;
  readonly node: ReactNode;
}

const NOT_SERVED = '  not served by this master (it predates them)';

/** The lines of the capacity section below its header; [] when there is nothing to say. */
function capacityLines(d: InsightsData, selected: string | undefined, width: number): Line[] {
  const c = d.capacity;
  if (c === undefined) return d.error ? [{ key: 'error', selectable: false, node: `  read failed: ${d.error}` }] : [];
  if (c === 'unsupported') return [{ key: 'na', selectable: false, node: NOT_SERVED }];
  if (c.kinds.length === 0) return [{ key: 'none', selectable: false, node: '  no slot time in the last hour' }];
  return c.kinds.flatMap((k) => [
    {
      key: `kind:${k.kind}`,
      selectable: false,
      node: (
        <KindLine
          kind={k.kind}
          share={k.failed_share}
          busy={k.busy_seconds.success + k.busy_seconds.failed}
          failed={k.busy_seconds.failed}
          tasks={kindTasks(k)}
        />
      ),
    },
    ...k.top.slice(0, TOP_CONSUMERS).map((u) => {
      const key = consumerKey(k.kind, u.target);
      return {
        key,
        selectable: true,
        node: truncate(
          `${key === selected ? '>' : ' '}   ${fit(u.target, 24)} ${fit(slotTime(u.busy_seconds), 8, 'right')} ${fit(slotTime(u.failed_seconds), 8, 'right')}  ${useTasks(u)}`,
          width - 2,
        ),
      };
    }),
  ]);
}

function KindLine(p: {
  readonly kind: string;
  readonly share: number;
  readonly busy: number;
  readonly failed: number;
  readonly tasks: string;
}): ReactNode {
  const theme = useTheme();
  const tone = p.share >= 0.5 ? 'bad' : p.share > 0 ? 'warn' : 'ok';
  return (
    <>
      {`  ${fit(p.kind, 26)} ${fit(slotTime(p.busy), 8, 'right')} `}
      <Text color={toneColor(theme, p.failed > 0 ? 'bad' : undefined)}>{fit(slotTime(p.failed), 8, 'right')}</Text>
      {'  '}
      <Text color={toneColor(theme, tone)}>{`${fit(percent(p.share), 6, 'right')} failed`}</Text>
      <Text dimColor>{`  ${p.tasks}`}</Text>
    </>
  );
}

/** The lines of the causes section below its header. */
function causeLines(d: InsightsData, selected: string | undefined, width: number): Line[] {
  const c = d.causes;
  // One "not served" line says it for both.
  if (c === undefined || (c === 'unsupported' && d.capacity === 'unsupported')) return [];
  if (c === 'unsupported') return [{ key: 'na', selectable: false, node: NOT_SERVED }];
  if (c.length === 0) return [{ key: 'none', selectable: false, node: '  none: nothing is failing' }];
  return c.slice(0, TOP_CAUSES).map((x) => {
    const key = causeKey(x.cause);
    const head = `${key === selected ? '>' : ' '} ${fit(x.cause, 12)} ${fit(formatCount(x.targets), 6, 'right')} ${fit(formatCount(x.failures), 8, 'right')}  `;
    return { key, selectable: true, node: head + truncate(causeOf(x.example), Math.max(0, width - 2 - head.length)) };
  });
}

/** How many lines each section wants below its header (0: not shown). */
export function insightsWant(d: InsightsData): { capacity: number; causes: number } {
  return { capacity: capacityLines(d, undefined, 80).length, causes: causeLines(d, undefined, 80).length };
}

function Section(props: {
  readonly title: string;
  readonly hint: string;
  readonly lines: readonly Line[];
  readonly rows: number;
  readonly selected: string | undefined;
}): ReactNode {
  if (props.rows < 0) return null;
  return (
    <>
      <Text> </Text>
      <Text bold wrap="truncate">
        {props.title}
        <Text dimColor>{props.hint}</Text>
      </Text>
      {props.lines.slice(0, props.rows).map((l) => (
        <Text
          key={l.key}
          wrap="truncate"
          bold={l.key === props.selected}
          dimColor={!l.selectable && l.key !== 'error' && typeof l.node === 'string'}
        >
          {l.node}
        </Text>
      ))}
    </>
  );
}

/**
 * The Overview's last hour of slot time per kind (its failed share, the top consumers) and the
 * top causes of failures, in `rows` lines per section (-1: not shown).
 */
export function Insights(props: {
  readonly data: InsightsData;
  readonly selected: string | undefined;
  readonly rows: { readonly capacity: number; readonly causes: number };
  readonly width: number;
}): ReactNode {
  const { data: d, selected, width } = props;
  const failed = d.error && d.capacity !== undefined ? `  (last read failed: ${d.error})` : '';
  return (
    <>
      <Section
        title={`${fit('Slot time, last hour', 29)}${fit('busy', 8, 'right')}${fit('failed', 9, 'right')}  share`}
        hint={`  Enter: a top store${failed}`}
        lines={capacityLines(d, selected, width)}
        rows={props.rows.capacity}
        selected={selected}
      />
      <Section
        title={`Causes        ${fit('stores', 6, 'right')} ${fit('failures', 8, 'right')}  example`}
        hint="  P: park a cause's stores"
        lines={causeLines(d, selected, width)}
        rows={props.rows.causes}
        selected={selected}
      />
    </>
  );
}

/** A kind's maintenance window, a line each: where it stands and when that changes. */
export function Windows(props: {
  readonly windows: readonly MaintenanceWindow[];
  readonly now: number;
  readonly width: number;
}): ReactNode {
  const theme = useTheme();
  if (props.windows.length === 0) return null;
  return (
    <>
      <Text> </Text>
      <Text bold>Windows</Text>
      {props.windows.map((w) => (
        <Text key={w.kind} wrap="truncate" color={toneColor(theme, w.open ? 'ok' : 'warn')}>
          {truncate(`  ${windowText(w, props.now)}`, props.width - 2)}
        </Text>
      ))}
    </>
  );
}
