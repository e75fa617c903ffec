import { Spinner } from '@inkjs/ui';
import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import type { Connection } from '../data/source.js';
import { formatAgo, formatClock, truncate } from '../format.js';
import type { Notice } from '../state/ui-state.js';
import { type Tone, toneColor, useTheme } from '../theme.js';
import { VIEW_IDS, VIEW_TITLES, type ViewId } from '../common/view-ids.js';

/** The connection as words and a tone: what the header shows. */
export function describeConnection(c: Connection, now: number): { label: string; tone: Tone; detail: string } {
  switch (c.state) {
    case 'live':
      return { label: '● live', tone: 'ok', detail: c.error ? `last read failed: ${c.error}` : '' };
    case 'polling':
      return {
        label: '◐ polling',
        tone: 'warn',
        detail: `events down${c.error ? ` (${c.error})` : ''}; updated ${formatAgo(c.lastUpdateMs, now)}`,
      };
    case 'disconnected':
      return {
        label: '○ disconnected',
        tone: 'bad',
        detail: `${c.error ?? 'no answer'}; retrying${c.lastUpdateMs ? `; data from ${formatAgo(c.lastUpdateMs, now)}` : ''}`,
      };
    default:
      return { label: 'connecting…', tone: 'info', detail: c.error ?? '' };
  }
}

/** The top line: where, how connected, read-only, the time. */
export function Header(props: {
  readonly url: string;
  readonly connection: Connection;
  readonly readonly: boolean;
  readonly now: number;
  readonly width: number;
}): ReactNode {
  const theme = useTheme();
  const c = describeConnection(props.connection, props.now);
  const right = (props.readonly ? 'READ-ONLY  ' : '') + formatClock(props.now);
  const left = `maintd-top  ${props.url}  `;
  const room = Math.max(0, props.width - left.length - c.label.length - right.length - 4);
  return (
    <Box width={props.width} justifyContent="space-between">
      <Box flexShrink={1}>
        <Text wrap="truncate">
          <Text bold>maintd-top</Text>
          {`  ${props.url}  `}
        </Text>
        {props.connection.state === 'connecting' ? (
          <Spinner label={c.label} />
        ) : (
          <Text color={toneColor(theme, c.tone)} bold>
            {c.label}
          </Text>
        )}
        {c.detail ? <Text dimColor wrap="truncate">{`  ${truncate(c.detail, room)}`}</Text> : null}
      </Box>
      <Text>
        {props.readonly ? (
          <Text color={toneColor(theme, 'warn')} bold>
            {'READ-ONLY  '}
          </Text>
        ) : null}
        <Text dimColor>{formatClock(props.now)}</Text>
      </Text>
    </Box>
  );
}

/** The view tabs with their row counts. */
export function Tabs(props: { readonly view: ViewId; readonly counts: Partial<Record<ViewId, number>> }): ReactNode {
  return (
    <Text wrap="truncate">
      {VIEW_IDS.map((id, i) => {
        const n = props.counts[id];
        const label = ` ${i + 1} ${VIEW_TITLES[id]}${n === undefined ? '' : ` ${n}`} `;
        return (
          <Text key={id} inverse={id === props.view} bold={id === props.view}>
            {label}
            {i < VIEW_IDS.length - 1 ? <Text inverse={false}> </Text> : null}
          </Text>
        );
      })}
    </Text>
  );
}

/** The bottom line: the filter being typed, a notice, or the keys that apply here. */
export function StatusBar(props: {
  readonly width: number;
  readonly editingFilter: boolean;
  readonly filter: string;
  readonly notice: Notice | undefined;
  readonly hints: string;
  readonly position: string;
}): ReactNode {
  const theme = useTheme();
  let left: ReactNode;
  if (props.editingFilter) {
    left = (
      <Text>
        <Text bold>/</Text>
        {props.filter}
        <Text inverse> </Text>
        <Text dimColor>{'   Enter keep · Esc clear'}</Text>
      </Text>
    );
  } else if (props.notice) {
    const tone: Tone = props.notice.tone === 'ok' ? 'ok' : props.notice.tone === 'bad' ? 'bad' : 'info';
    left = (
      <Text color={toneColor(theme, tone)} bold>
        {truncate(props.notice.text, props.width - props.position.length - 2)}
      </Text>
    );
  } else {
    left = <Text dimColor>{truncate(props.hints, props.width - props.position.length - 2)}</Text>;
  }
  return (
    <Box width={props.width} justifyContent="space-between">
      <Text wrap="truncate">{left}</Text>
      <Text>{props.position}</Text>
    </Box>
  );
}

const HELP: readonly (readonly [string, string])[] = [
  ['1–5, Tab, Shift+Tab', 'switch view: Overview, Tasks, Cooldowns, Stores, Workers'],
  ['j/k, ↓/↑, PgDn/PgUp', 'move the selection, or a page (also Ctrl+F/B); Overview: its top stores and causes'],
  ['g/G, Home/End', 'first / last row'],
  ['/', 'search: Cooldowns, Tasks: store or error text (the master’s too); else any word; Esc clears'],
  ['s', 'cycle the sort order'],
  [
    'Enter',
    'detail pane: a cooldown’s timeline (who, why, each failure), full error, task history; Overview: a top store’s',
  ],
  ['Esc', 'back: close the pane, clear marks, clear the filter'],
  ['Space', 'mark / unmark a row; actions apply to every marked row'],
  ['r', 'run now: enqueue the row’s kind; in Stores, pick one the live masters run (j/k) — never cooldown-gated'],
  ['c', 'reset the cooldown (Cooldowns, Stores, Tasks)'],
  ['p', 'park with a reason: the sweeps skip it until released (a store: every kind)'],
  ['u', 'release (unpark); the failure count starts over too'],
  [
    'P',
    'park every row the search matches (Cooldowns), or a cause’s stores (Overview): one reason, confirmed with the master’s count',
  ],
  ['C', 'reset every row the search matches (Cooldowns; parks stay), confirmed with the count'],
  ['Cooldowns', 'STATE parked/cooling/below/lapsed · FAILS count/threshold · NEXT window if it fails again'],
  ['Stores', 'CHANGED: when a scan last changed the numbers (quiet stores are not rewritten)'],
  ['?, q, Ctrl+C', 'this help; quit'],
];

/** The help overlay. */
export function Help(props: {
  readonly readonly: boolean;
  readonly height: number;
  readonly width: number;
}): ReactNode {
  const lines = HELP.slice(0, Math.max(0, props.height - 3));
  return (
    <Box flexDirection="column" height={props.height} width={props.width} paddingLeft={2}>
      <Text bold>Keys</Text>
      {lines.map(([keys, what]) => (
        <Text key={keys} wrap="truncate">
          <Text bold>{keys.padEnd(22)}</Text>
          {what}
        </Text>
      ))}
      <Text dimColor wrap="truncate">
        {props.readonly
          ? 'Read-only mode (--readonly): r, c, p, u, P and C are disabled.'
          : 'Actions ask for confirmation first. Esc or ? closes this help.'}
      </Text>
    </Box>
  );
}
