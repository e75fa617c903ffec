import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import { truncate } from '../format.js';
import { MAX_REASON, describeAction } from '../state/ui.js';
import type { KindChoice, PendingAction } from '../state/ui-state.js';
import { type Tone, toneColor, useTheme } from '../theme.js';

/** Items listed in the dialog before "and N more". */
const LISTED = 5;

/** Kinds listed at once in a dialog that picks one; the list scrolls past them. */
const KINDS_LISTED = 6;

const TONES: Record<PendingAction['action'], Tone> = {
  reset: 'warn',
  release: 'warn',
  park: 'info',
  run: 'info',
};

/** What an action does, under its items. */
function consequence(p: PendingAction): string {
  if (p.bulk) {
    const again = 'The master matches the search again as it acts.';
    return p.action === 'park'
      ? `The sweeps skip them until released; manual runs still go. ${again}`
      : `Their failure counts start over; parks stay. ${again}`;
  }
  switch (p.action) {
    case 'reset':
      return 'The sweeps will retry these at once.';
    case 'park':
      return 'The sweeps skip them until released (u); manual runs still go.';
    case 'release':
      return 'The sweeps resume them; their failure counts start over.';
    default:
      return 'Manual runs are never cooldown-gated; a failure still counts.';
  }
}

function Items({ pending, width }: { readonly pending: PendingAction; readonly width: number }): ReactNode {
  const { items } = pending;
  // A bulk action lists the first of the master's matches; its count is of them all.
  const total = pending.bulk?.count ?? items.length;
  const listed = Math.min(items.length, LISTED);
  return (
    <>
      {items.slice(0, LISTED).map((i) => (
        <Text key={`${i.kind}/${i.target}`} wrap="truncate">
          {truncate(`  ${i.kind} ${i.target}`, width - 4)}
        </Text>
      ))}
      {total > listed ? <Text dimColor>{`  … and ${total - listed} more`}</Text> : null}
    </>
  );
}

/** The kinds to pick from, the picked one marked, scrolled to keep it in sight. */
function Kinds({ choice, width }: { readonly choice: KindChoice; readonly width: number }): ReactNode {
  const { kinds, at } = choice;
  const start = Math.min(Math.max(0, at - KINDS_LISTED + 1), Math.max(0, kinds.length - KINDS_LISTED));
  const shown = kinds.slice(start, start + KINDS_LISTED);
  return (
    <>
      <Text dimColor>Kind:</Text>
      {start > 0 ? <Text dimColor>{`    … ${start} more`}</Text> : null}
      {shown.map((kind, i) =>
        start + i === at ? (
          <Text key={kind} bold inverse wrap="truncate">
            {truncate(`  › ${kind}`, width - 4)}
          </Text>
        ) : (
          <Text key={kind} wrap="truncate">
            {truncate(`    ${kind}`, width - 4)}
          </Text>
        ),
      )}
      {start + KINDS_LISTED < kinds.length ? (
        <Text dimColor>{`    … ${kinds.length - start - KINDS_LISTED} more`}</Text>
      ) : null}
    </>
  );
}

function title(p: PendingAction): string {
  const t = `${describeAction(p)}?`;
  return t.charAt(0).toUpperCase() + t.slice(1);
}

/** The confirm dialog: what will happen (and why, for a park), to how many, and the keys. */
export function Confirm(props: { readonly pending: PendingAction; readonly width: number }): ReactNode {
  const theme = useTheme();
  const width = Math.min(props.width - 4, 72);
  return (
    <Box
      flexDirection="column"
      borderStyle="round"
      borderColor={toneColor(theme, TONES[props.pending.action])}
      paddingX={1}
      width={width}
    >
      <Text bold>{title(props.pending)}</Text>
      <Items pending={props.pending} width={width} />
      {props.pending.choice ? <Kinds choice={props.pending.choice} width={width} /> : null}
      {props.pending.reason ? (
        <Text wrap="truncate">
          <Text dimColor>{'Reason: '}</Text>
          {props.pending.reason}
        </Text>
      ) : null}
      <Text dimColor>{consequence(props.pending)}</Text>
      <Text>
        {props.pending.choice ? (
          <>
            <Text bold>j/k</Text>
            {' kind · '}
          </>
        ) : null}
        <Text bold>y</Text>/Enter confirm · <Text bold>n</Text>/Esc cancel
      </Text>
    </Box>
  );
}

/**
 * The reason prompt of a park: the reason as typed (the App's key handling edits it, as it does
 * the filter), with a cursor; Enter goes on to the confirm dialog.
 */
export function ReasonPrompt(props: {
  readonly pending: PendingAction;
  readonly draft: string;
  readonly width: number;
}): ReactNode {
  const theme = useTheme();
  const width = Math.min(props.width - 4, 72);
  // The end of a long reason: where the typing happens.
  const room = width - 4 - 'Reason: '.length - 1;
  const chars = [...props.draft];
  const shown = chars.length > room ? `…${chars.slice(chars.length - room + 1).join('')}` : props.draft;
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={toneColor(theme, 'info')} paddingX={1} width={width}>
      <Text bold>{title(props.pending)}</Text>
      <Items pending={props.pending} width={width} />
      <Text dimColor>{`Why? Kept with the park, shown to every operator (at most ${MAX_REASON} characters).`}</Text>
      <Text wrap="truncate">
        <Text bold>{'Reason: '}</Text>
        {shown}
        <Text inverse> </Text>
        {props.draft ? null : <Text dimColor>{'  e.g. fragment lost, restore planned Monday'}</Text>}
      </Text>
      <Text dimColor>Enter next · Esc cancel</Text>
    </Box>
  );
}
