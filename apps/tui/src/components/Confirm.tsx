import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import { truncate } from '../format.js';
import { type PendingAction, describeAction } from '../state/ui.js';
import { toneColor, useTheme } from '../theme.js';

/** Items listed in the dialog before "and N more". */
const LISTED = 5;

/** The confirm dialog: what will happen, to how many, and the keys. */
export function Confirm(props: { readonly pending: PendingAction; readonly width: number }): ReactNode {
  const theme = useTheme();
  const { items } = props.pending;
  const width = Math.min(props.width - 4, 72);
  const title = `${describeAction(props.pending)}?`;
  return (
    <Box
      flexDirection="column"
      borderStyle="round"
      borderColor={toneColor(theme, props.pending.action === 'reset' ? 'warn' : 'info')}
      paddingX={1}
      width={width}
    >
      <Text bold>{title.charAt(0).toUpperCase() + title.slice(1)}</Text>
      {items.slice(0, LISTED).map((i) => (
        <Text key={`${i.kind}/${i.target}`} wrap="truncate">
          {truncate(`  ${i.kind} ${i.target}`, width - 4)}
        </Text>
      ))}
      {items.length > LISTED ? <Text dimColor>{`  … and ${items.length - LISTED} more`}</Text> : null}
      <Text dimColor>
        {props.pending.action === 'reset'
          ? 'The sweeps will retry these at once.'
          : 'Manual runs are never cooldown-gated; a failure still counts.'}
      </Text>
      <Text>
        <Text bold>y</Text>/Enter confirm · <Text bold>n</Text>/Esc cancel
      </Text>
    </Box>
  );
}
