import type { Clock } from '@maintd/core';
import { useStdout } from 'ink';
import { useEffect, useReducer, useRef, useState } from 'react';

/** Terminal size in character cells. */
export interface Size {
  readonly columns: number;
  readonly rows: number;
}

/** The smallest terminal the layout is designed for; below it the App asks for more room. */
export const MIN_SIZE: Size = { columns: 80, rows: 24 };

/**
 * The terminal's size, following resizes; `fixed` overrides it (tests, benchmarks). A stream
 * that does not know its size (a pipe, a test stub) counts as 80×24.
 */
export function useTerminalSize(fixed?: Size): Size {
  const { stdout } = useStdout();
  const read = (): Size => ({
    columns: stdout.columns || MIN_SIZE.columns,
    rows: stdout.rows || MIN_SIZE.rows,
  });
  const [size, setSize] = useState(read);
  useEffect(() => {
    if (fixed) return;
    const onResize = (): void => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout, fixed]);
  return fixed ?? size;
}

/** Time from `nowMs` to the start of the next `periodMs` of the clock (the next second's turn). */
export function untilNextPeriod(nowMs: number, periodMs: number): number {
  return periodMs - (((nowMs % periodMs) + periodMs) % periodMs);
}

/**
 * The current time, read on every render, plus a re-render whenever the shown `tickMs` period
 * (the second, for countdowns) has moved on since the last render. A dashboard that is already
 * redrawing for live data several times a second thus draws no extra frames for its clock. It
 * wakes as the period turns (not a few times per period): one timer a second, and a frame that
 * other redraws held back until the turn (the tab counts) is drawn by the same render.
 */
export function useNow(clock: Clock, tickMs: number): number {
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const shown = useRef(0);
  const t = clock.now();
  shown.current = t;
  useEffect(() => {
    const stop = new AbortController();
    void (async () => {
      for (;;) {
        await clock.sleep(untilNextPeriod(clock.now(), tickMs), stop.signal);
        if (Math.floor(clock.now() / tickMs) !== Math.floor(shown.current / tickMs)) redraw();
      }
    })().catch(() => undefined); // unmounted (or the clock changed): the sleep was aborted
    return () => stop.abort();
  }, [clock, tickMs]);
  return t;
}
