import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import type { TimelineEvent } from '../api/types.js';
import { formatUntil, truncate } from '../format.js';
import { toneColor, useTheme } from '../theme.js';
import { describeEvent, mergeTimeline } from '../views/timeline.js';

/** The timeline of the detail pane's (kind, store), as read from the master's detail route. */
export interface TimelineState {
  /** The pair's cooldown key (`kind/target`). */
  readonly key: string;
  /**
   * `loading`; `ok` (read); `none` (the master knows nothing of the pair); `unsupported` (the
   * master predates the route); `error` (the read failed).
   */
  readonly status: 'loading' | 'ok' | 'none' | 'unsupported' | 'error';
  readonly events: readonly TimelineEvent[];
  readonly error?: string | undefined;
}

/** Width of the time column: `14:03:07`, or `11-16 09:12` on another day. */
const TIME = 11;
/** Width of the type column (`window_opened`, `manual_run`, …). */
const TYPE = 14;

/**
 * The timeline section of the detail pane: newest first, in local time, each event with its
 * type and who, why or which error; the stream's new events of the pair added as they come.
 */
export function TimelineLines(props: {
  readonly state: TimelineState;
  readonly kind: string;
  readonly target: string;
  /** Timeline events from the stream (any pair's), newest last. */
  readonly live: readonly TimelineEvent[];
  readonly now: number;
  /** Lines it may take, its title included. */
  readonly rows: number;
  readonly width: number;
}): ReactNode {
  const theme = useTheme();
  const { state, now, width } = props;
  const events = mergeTimeline(props.kind, props.target, state.events, props.live);
  let status: { text: string; bad?: boolean } | undefined;
  if (state.status === 'unsupported') status = { text: 'timeline needs a newer master (0.1.0 keeps none)' };
  else if (state.status === 'error') status = { text: `timeline: ${state.error ?? 'read failed'}`, bad: true };
  else if (events.length > 0) status = undefined;
  else if (state.status === 'loading') status = { text: 'loading…' };
  else status = { text: 'nothing recorded for this pair' };
  const shown = events.slice(0, Math.max(0, props.rows - 1 - (status ? 1 : 0)));
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold>{`Timeline${events.length > 0 ? ` (${events.length}, newest first)` : ''}`}</Text>
      {status ? (
        <Text color={status.bad ? toneColor(theme, 'bad') : undefined} dimColor={!status.bad} wrap="truncate">
          {truncate(status.text, width)}
        </Text>
      ) : null}
      {shown.map((e) => {
        const line = describeEvent(e, now);
        return (
          <Text key={`${e.id}/${e.type}`} wrap="truncate">
            <Text dimColor>{formatUntil(e.at_ms, now).padStart(TIME)}</Text>
            <Text color={toneColor(theme, line.tone)}>{` ${truncate(line.type, TYPE - 1).padEnd(TYPE)}`}</Text>
            {truncate(line.text, Math.max(0, width - TIME - TYPE - 1))}
          </Text>
        );
      })}
    </Box>
  );
}
