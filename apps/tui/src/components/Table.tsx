import { Box, Text } from 'ink';
import { memo, type ReactNode, useMemo, useRef } from 'react';
import { fit, truncate } from '../format.js';
import { type Theme, toneColor, useTheme } from '../theme.js';
import { type Column, GAP, type PlacedColumn, layoutColumns } from '../views/columns.js';

/**
 * First visible row of a scrolled list: it moves only as far as needed to keep the selection in
 * view (as in htop and k9s), and never leaves blank rows below the last one. Pure.
 */
export function windowStart(prev: number, index: number, height: number, total: number): number {
  if (height <= 0 || total <= height) return 0;
  let start = Math.min(Math.max(prev, 0), total - height);
  if (index >= 0 && index < start) start = index;
  else if (index >= start + height) start = index - height + 1;
  return start;
}

/** Props of {@link Table}. */
export interface TableProps<T, C> {
  readonly columns: readonly Column<T, C>[];
  readonly rows: readonly T[];
  readonly rowKey: (row: T) => string;
  readonly context: C;
  readonly selected: number;
  readonly marked: ReadonlySet<string>;
  readonly width: number;
  /** Lines available, header included. */
  readonly height: number;
  /** Shown instead of rows when there are none. */
  readonly empty: string;
  /**
   * What of the context a row's cells depend on: a row re-renders only when its item, its
   * selection or mark, or this changes (the clock, plus the data for views that join).
   */
  readonly contextVersion: unknown;
}

const MARK_WIDTH = 2;

/**
 * A table that renders only the rows that fit on screen: a list of 10,000 cooldowns costs the
 * same frame as a list of 20. Each row is one line of text (no per-cell layout boxes).
 */
export function Table<T, C>(props: TableProps<T, C>): ReactNode {
  const theme = useTheme();
  const start = useRef(0);
  const placed = useMemo(() => layoutColumns(props.columns, props.width - MARK_WIDTH), [props.columns, props.width]);
  const bodyHeight = Math.max(0, props.height - 1);
  start.current = windowStart(start.current, props.selected, bodyHeight, props.rows.length);
  const visible = props.rows.slice(start.current, start.current + bodyHeight);
  return (
    <Box flexDirection="column" height={props.height} width={props.width}>
      <Text bold wrap="truncate">
        {' '.repeat(MARK_WIDTH)}
        {placed.map((c) => fit(c.title, c.size, c.align)).join(' '.repeat(GAP))}
      </Text>
      {visible.length === 0 ? (
        <Text dimColor>{`  ${props.empty}`}</Text>
      ) : (
        visible.map((row, i) => {
          const key = props.rowKey(row);
          return (
            <Row
              key={key}
              row={row}
              columns={placed}
              context={props.context}
              contextVersion={props.contextVersion}
              selected={start.current + i === props.selected}
              marked={props.marked.has(key)}
              theme={theme}
            />
          );
        })
      )}
    </Box>
  );
}

interface RowProps<T, C> {
  readonly row: T;
  readonly columns: readonly PlacedColumn<T, C>[];
  readonly context: C;
  readonly contextVersion: unknown;
  readonly selected: boolean;
  readonly marked: boolean;
  readonly theme: Theme;
}

function RowImpl<T, C>({ row, columns, context, selected, marked, theme }: RowProps<T, C>): ReactNode {
  return (
    <Text wrap="truncate" inverse={selected}>
      {selected ? '›' : ' '}
      {marked ? '*' : ' '}
      {columns.map((c, i) => {
        const cell = c.cell(row, context);
        // The last cell is not padded (Ink's cost grows with every character drawn), except on
        // the selected row, whose highlight spans the table.
        const last = i === columns.length - 1 && c.align !== 'right' && !selected;
        const text = last ? truncate(cell.text, c.size) : fit(cell.text, c.size, c.align);
        if (!text) return null;
        return (
          <Text key={c.title} color={toneColor(theme, cell.tone)} bold={cell.bold ?? false}>
            {(i > 0 ? ' '.repeat(GAP) : '') + text}
          </Text>
        );
      })}
    </Text>
  );
}

// Rows re-render only when their item, layout, selection or context version change: with 25
// changes in a frame, most of the visible rows of a 10,000-row list are left alone.
const Row = memo(
  RowImpl,
  (a, b) =>
    a.row === b.row &&
    a.columns === b.columns &&
    a.selected === b.selected &&
    a.marked === b.marked &&
    a.theme === b.theme &&
    a.contextVersion === b.contextVersion,
) as typeof RowImpl;
