import { Box, Text } from 'ink';
import { type ReactNode, memo } from 'react';
import { fit, truncate } from '../format.js';
import { type Theme, type Tone, toneColor, useTheme } from '../theme.js';
import { GAP, type PlacedColumn } from '../views/columns.js';

/** Columns of the selection and mark markers before the first cell. */
export const MARK_WIDTH = 2;

/**
 * Where long cell text is cut. ASCII on purpose: one character outside printable ASCII sends the
 * whole line through Ink's grapheme segmenter instead of a length check, in Ink's measuring and
 * in its drawing (patches/ink@6.8.0.patch skips it for ASCII lines only).
 */
export const CUT = '~';

/** A run of a row's text in one tone. */
export interface Segment {
  readonly text: string;
  readonly tone?: Tone | undefined;
}

/**
 * A row as pre-formatted, pre-padded text runs: one run per change of tone, not one per cell, so
 * Ink gets one text node with a few coloured spans per row. Pure.
 */
export function rowSegments<T, C>(
  columns: readonly PlacedColumn<T, C>[],
  row: T,
  context: C,
  selected: boolean,
  marked: boolean,
): Segment[] {
  const out: { text: string; tone: Tone | undefined }[] = [];
  const push = (text: string, tone: Tone | undefined): void => {
    if (!text) return;
    const last = out.at(-1);
    // Spaces take any tone: they join the run before them.
    if (last && (last.tone === tone || text.trim() === '')) last.text += text;
    else out.push({ text, tone });
  };
  push(`${selected ? '>' : ' '}${marked ? '*' : ' '}`, undefined);
  columns.forEach((c, i) => {
    const cell = c.cell(row, context);
    // The last cell is not padded (Ink's cost grows with every character drawn), except on the
    // selected row, whose highlight spans the table.
    const last = i === columns.length - 1 && c.align !== 'right' && !selected;
    const text = last ? truncate(cell.text, c.size, CUT) : fit(cell.text, c.size, c.align, CUT);
    if (i > 0) push(' '.repeat(GAP), undefined);
    push(text, cell.tone === 'plain' ? undefined : cell.tone);
  });
  return out;
}

/** Props of {@link Table}. */
export interface TableProps<T, C> {
  readonly columns: readonly PlacedColumn<T, C>[];
  /** The rows on screen (the App windows the list: only these are formatted and drawn). */
  readonly rows: readonly T[];
  /** Position of `rows[0]` in the whole list. */
  readonly offset: number;
  readonly rowKey: (row: T) => string;
  readonly context: C;
  /** What every row's cells read besides the row (the clock's second, the policy). */
  readonly deps: readonly unknown[];
  /** What one row's cells read besides the row (a store's cooldown entries). */
  readonly rowDeps?: ((row: T) => readonly unknown[]) | undefined;
  /** Position of the selected row in the whole list. */
  readonly selected: number;
  readonly marked: ReadonlySet<string>;
  readonly width: number;
  /** Lines available, header included. */
  readonly height: number;
  /** Shown instead of rows when there are none. */
  readonly empty: string;
}

/**
 * A table of the rows on screen: a list of 10,000 cooldowns costs the frame of a list of 40.
 * Each row is one text node from pre-formatted strings, and is redrawn only when its item, its
 * selection or mark, or what its cells read changed.
 */
export function Table<T, C>(props: TableProps<T, C>): ReactNode {
  const theme = useTheme();
  const header = ' '.repeat(MARK_WIDTH) + props.columns.map((c) => fit(c.title, c.size, c.align)).join(' '.repeat(GAP));
  return (
    <Box flexDirection="column" height={props.height} width={props.width}>
      <Text bold>{header.trimEnd()}</Text>
      {props.rows.length === 0 ? (
        <Text dimColor>{`  ${props.empty}`}</Text>
      ) : (
        props.rows.map((row, i) => {
          const key = props.rowKey(row);
          return (
            <Row
              key={key}
              row={row}
              columns={props.columns}
              context={props.context}
              deps={props.deps}
              rowDeps={props.rowDeps ? props.rowDeps(row) : NONE}
              selected={props.offset + i === props.selected}
              marked={props.marked.has(key)}
              theme={theme}
            />
          );
        })
      )}
    </Box>
  );
}

const NONE: readonly unknown[] = [];

interface RowProps<T, C> {
  readonly row: T;
  readonly columns: readonly PlacedColumn<T, C>[];
  readonly context: C;
  readonly deps: readonly unknown[];
  readonly rowDeps: readonly unknown[];
  readonly selected: boolean;
  readonly marked: boolean;
  readonly theme: Theme;
}

function RowImpl<T, C>({ row, columns, context, selected, marked, theme }: RowProps<T, C>): ReactNode {
  return <RowText segments={rowSegments(columns, row, context, selected, marked)} selected={selected} theme={theme} />;
}

interface RowTextProps {
  readonly segments: readonly Segment[];
  readonly selected: boolean;
  readonly theme: Theme;
}

function RowTextImpl({ segments, selected, theme }: RowTextProps): ReactNode {
  if (!theme.color) {
    return <Text inverse={selected}>{segments.map((s) => s.text).join('')}</Text>;
  }
  return (
    <Text inverse={selected}>
      {segments.map((s, i) =>
        s.tone ? (
          <Text key={i} color={toneColor(theme, s.tone)}>
            {s.text}
          </Text>
        ) : (
          s.text
        ),
      )}
    </Text>
  );
}

function sameSegments(a: readonly Segment[], b: readonly Segment[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.text !== b[i]!.text || a[i]!.tone !== b[i]!.tone) return false;
  return true;
}

// A row formatted again (every row is, when the clock's second turns) whose text and tones came
// out the same is not rendered again: most rows' cells do not read the second (a window hours
// long, a failure minutes ago), and each rendered row is a few of Ink's Text components.
const RowText = memo(
  RowTextImpl,
  (a, b) => a.selected === b.selected && a.theme === b.theme && sameSegments(a.segments, b.segments),
);

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// A row re-renders only when its item, layout, selection, mark, or what its cells read change:
// with 25 changes in a frame, the visible rows of a 10,000-row list are mostly left alone.
const Row = memo(
  RowImpl,
  (a, b) =>
    a.row === b.row &&
    a.columns === b.columns &&
    a.selected === b.selected &&
    a.marked === b.marked &&
    a.theme === b.theme &&
    sameItems(a.deps, b.deps) &&
    sameItems(a.rowDeps, b.rowDeps),
) as typeof RowImpl;
