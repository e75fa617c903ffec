import type { Tone } from '../theme.js';

/** One table cell: its text and what it means (colour). */
export interface Cell {
  readonly text: string;
  readonly tone?: Tone | undefined;
  readonly bold?: boolean;
}

/** A table column. */
export interface Column<T, C> {
  readonly title: string;
  /** Width in columns; for the flex column, its minimum. */
  readonly width: number;
  /** Takes whatever width is left (at most one per table). */
  readonly flex?: boolean;
  readonly align?: 'left' | 'right';
  /** Narrow terminals drop columns with a `drop` rank, highest first; without one, never. */
  readonly drop?: number;
  readonly cell: (row: T, ctx: C) => Cell;
}

/** A column with its final width. */
export interface PlacedColumn<T, C> extends Column<T, C> {
  readonly size: number;
}

/** Columns between cells. */
export const GAP = 1;

/**
 * Fits columns into `width`: drops droppable columns (highest rank first) until the fixed ones
 * fit, then gives the flex column the rest. Pure, so the layout at 80 columns is testable.
 */
export function layoutColumns<T, C>(columns: readonly Column<T, C>[], width: number): PlacedColumn<T, C>[] {
  let shown = [...columns];
  const need = (cols: readonly Column<T, C>[]): number =>
    cols.reduce((sum, c) => sum + c.width, 0) + GAP * Math.max(0, cols.length - 1);
  while (need(shown) > width) {
    const droppable = shown.filter((c) => c.drop !== undefined);
    if (droppable.length === 0) break;
    const worst = droppable.reduce((a, b) => ((b.drop ?? 0) > (a.drop ?? 0) ? b : a));
    shown = shown.filter((c) => c !== worst);
  }
  const spare = Math.max(0, width - need(shown));
  const flex = shown.find((c) => c.flex);
  return shown.map((c) => ({ ...c, size: c === flex ? c.width + spare : c.width }));
}
