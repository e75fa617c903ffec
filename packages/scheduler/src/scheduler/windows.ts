import { type MaintenanceWindow, type TaskKind, isWindowOpen, windowState } from '@maintd/core';
import type { Config } from '../config.js';
import type { LoopContext } from './context.js';

/** One kind's maintenance window as `GET /api/v1/scheduler/policy` shows it. */
export interface WindowView {
  readonly kind: TaskKind;
  /** Its ranges, e.g. `22:00-05:00;12:00-13:00`. */
  readonly spec: string;
  /** The IANA zone the ranges are in. */
  readonly tz: string;
  /** Whether the kind's automatic work may start now. */
  readonly open: boolean;
  /** When that changes next (epoch ms); null when it never does. */
  readonly next_change_ms: number | null;
}

function windowOf(config: Config, kind: TaskKind): MaintenanceWindow | undefined {
  return config.windows.list.find((w) => w.kind === kind);
}

/** Whether `kind`'s automatic work may start at `nowMs` (docs/ARCHITECTURE.md §3.2): no window, or inside it. */
export function automaticMayStart(config: Config, kind: TaskKind, nowMs: number): boolean {
  const w = windowOf(config, kind);
  return !w || isWindowOpen(w, nowMs);
}

/** Every window of this master's settings, at `nowMs`. */
export function windowViews(config: Config, nowMs: number): WindowView[] {
  return config.windows.list.map((w) => {
    const s = windowState(w, nowMs);
    return { kind: w.kind, spec: w.spec, tz: w.tz, open: s.open, next_change_ms: s.nextChangeMs };
  });
}

/**
 * How a master's registration names its windows (`kind=spec@tz`, sorted), so that peers can tell
 * whether they agree: a master without a window claims what the others hold back.
 */
export function windowSignature(config: Config): string[] {
  return config.windows.list.map((w) => `${w.kind}=${w.spec}@${w.tz}`).sort();
}

/** Longest a window loop sleeps: its gauge is never staler than this, whatever the next change. */
const WINDOW_CHECK_MAX_MS = 60_000;

/**
 * Keeps `master_task_window_open` current and wakes the pools when a kind's window opens, so that
 * its queued automatic tasks start at once rather than at the next poll. Sleeps until the next
 * change of any window (at most a minute).
 */
export async function windowLoop(ctx: LoopContext, opened: () => void): Promise<void> {
  const { config, clock, metrics } = ctx.deps;
  if (config.windows.list.length === 0) return;
  let open = new Set<TaskKind>();
  for (;;) {
    const now = clock.now();
    const views = windowViews(config, now);
    const nowOpen = new Set(views.filter((v) => v.open).map((v) => v.kind));
    for (const v of views) metrics.windowOpen.set({ kind: v.kind }, v.open ? 1 : 0);
    if ([...nowOpen].some((k) => !open.has(k))) opened();
    open = nowOpen;
    const next = Math.min(...views.map((v) => v.next_change_ms ?? Number.POSITIVE_INFINITY));
    if (!(await ctx.sleep(Math.max(1000, Math.min(WINDOW_CHECK_MAX_MS, next - now))))) return;
  }
}
