import { type Clock, systemClock } from '@maintd/core';
import { Box, Text, useApp, useInput } from 'ink';
import { type ReactNode, useCallback, useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState } from 'react';
import type { Task, TaskKind } from './api/types.js';
import { Confirm, ReasonPrompt } from './components/Confirm.js';
import { Detail, type History } from './components/Detail.js';
import { Header, Help, StatusBar, Tabs } from './components/Chrome.js';
import { MARK_WIDTH, Table } from './components/Table.js';
import type { FleetSnapshot, FleetSource } from './data/source.js';
import { formatCount } from './format.js';
import { MIN_SIZE, type Size, untilNextPeriod, useNow, useTerminalSize } from './hooks.js';
import { type Activity, type FleetData, MAX_ACTIVITY, appendActivity, cooldownKey } from './state/fleet.js';
import { ListViews } from './state/lists.js';
import {
  type Effect,
  type KeyContext,
  type PendingAction,
  type UiState,
  describeAction,
  handleKey,
  initialUi,
  isList,
  selectedIndex,
  splitInput,
} from './state/ui.js';
import { type Theme, ThemeRoot } from './theme.js';
import { layoutColumns } from './views/columns.js';
import { Overview, type OverviewModel, overviewModel, sameOverview } from './views/Overview.js';
import {
  type ActionItem,
  type ActionKind,
  type CellContext,
  LIST_SPECS,
  type ListSpec,
  type ListViewId,
  type ViewId,
  storeCooldowns,
} from './views/specs.js';

/** The operations the dashboard performs on the master (a {@link MaintdClient} in production). */
export interface ActionApi {
  enqueue(kind: TaskKind, target: string): Promise<{ readonly created: boolean }>;
  resetCooldown(kind: TaskKind, target: string): Promise<boolean>;
  /** Parks one kind on one store with a reason. */
  park(kind: TaskKind, target: string, reason: string): Promise<unknown>;
  /** Releases a park; false when there was none. */
  release(kind: TaskKind, target: string): Promise<boolean>;
  history(target: string): Promise<Task[]>;
}

/** Props of {@link App}. */
export interface AppProps {
  readonly source: FleetSource;
  readonly api: ActionApi;
  /** Shown in the header. */
  readonly url: string;
  readonly readonly?: boolean;
  /**
   * Overrides the fleet guard (TASK_COOLDOWN_MAX_PERCENT) of the Overview's gauge; without it,
   * the master's own, from its policy.
   */
  readonly guardPercent?: number | undefined;
  readonly theme?: Theme;
  /** A fixed size instead of the terminal's (tests, benchmarks). */
  readonly size?: Size;
  /** Source of the time shown and of the countdown tick (default: the system clock). */
  readonly clock?: Clock;
  /** Overrides the clock's reading of the time shown (tests and the benchmark freeze it). */
  readonly now?: () => number;
  /** How often countdowns and ages tick. */
  readonly tickMs?: number;
  readonly initialView?: ViewId;
  /** Called when the operator quits, after the app unmounts itself. */
  readonly onQuit?: () => void;
}

/** Rows above and below the view: header, tabs, status line, and the line Ink keeps free. */
const CHROME_ROWS = 4;
/** Parallel requests of one bulk action. */
const ACTION_CONCURRENCY = 4;
/**
 * Longest a change of the tab counts alone waits to be drawn: the clock in the header redraws
 * every second anyway, and counts that move 20 times a second are not read any faster.
 */
const COUNTS_MS = 1000;

/**
 * What a frame shows of the data, for a list view: the App draws at once when `view` changes.
 * `size` is the list's length (the status line's `1/9,998`), which moves with every row added
 * or removed anywhere in the list: drawn as the tab counts are.
 */
function listSignature(
  ui: UiState,
  view: ListViewId,
  data: FleetData,
  lists: ListViews,
  bodyHeight: number,
): { view: unknown[]; size: unknown[] } {
  const list = ui.lists[view];
  const spec = LIST_SPECS[view] as ListSpec<unknown>;
  const index = lists.sync(view, data, list.filter, list.sort);
  const selected = selectedIndex(list, index);
  const start = lists.window(view, selected, bodyHeight, index.length, false);
  const sig: unknown[] = [index.loaded, selected, start, data.policy];
  const end = Math.min(index.length, start + bodyHeight);
  for (let i = start; i < end; i++) {
    const row = index.rows[i];
    sig.push(row);
    if (spec.rowDeps) sig.push(...spec.rowDeps(row, data));
  }
  return { view: sig, size: [index.length, index.total] };
}

/** What the detail pane shows of the data. */
function detailSignature(view: ListViewId, key: string, data: FleetData): unknown[] {
  if (view === 'cooldowns') return [data.cooldowns?.get(key), data.policy];
  if (view === 'tasks') {
    const t = data.tasks?.get(key);
    return [t, t ? data.cooldowns?.get(cooldownKey(t.kind, t.target)) : undefined];
  }
  if (view === 'stores') return [data.stores, data.workers, ...storeCooldowns(key, data), data.policy];
  return [data.workers];
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

/** What a frame shows: the chrome's data, plus the view's (rows on screen, or the Overview's model). */
interface Shown {
  readonly snapshot?: FleetSnapshot;
  /** The connection as the header shows it. */
  readonly chrome: readonly unknown[];
  /**
   * The tabs' counts and the list's length (drawn at most every {@link COUNTS_MS} when nothing
   * else changed).
   */
  readonly counts: readonly unknown[];
  readonly view: readonly unknown[];
  readonly overview: OverviewModel | undefined;
  /** Frames drawn so far (this one included). */
  readonly frames?: number;
}

/**
 * The dashboard. All key handling is {@link handleKey}; this wires data, keys and effects. A
 * data change that changes nothing on screen (25 of 10,000 cooldowns, all below the window)
 * draws no frame: Ink redraws the whole screen on every commit, so a commit is what costs.
 */
export function App(props: AppProps): ReactNode {
  const base = props.clock ?? systemClock;
  const { now: fixedNow } = props;
  const clock = useMemo(
    (): Clock => (fixedNow ? { now: fixedNow, sleep: (ms, signal) => base.sleep(ms, signal) } : base),
    [base, fixedNow],
  );
  // The time shown, to the second (what every clock, countdown and age on screen resolves): rows
  // that read it are redrawn once a second, not on every frame.
  const now = Math.floor(useNow(clock, props.tickMs ?? 1000) / 1000) * 1000;
  const size = useTerminalSize(props.size);
  const { source } = props;
  const [ui, setUi] = useState<UiState>(() =>
    initialUi({ readonly: props.readonly ?? false, ...(props.initialView ? { view: props.initialView } : {}) }),
  );
  const uiRef = useRef(ui);
  uiRef.current = ui;
  const lists = useMemo(() => new ListViews(), []);
  const contentHeight = size.rows - CHROME_ROWS;
  const bodyHeight = Math.max(0, contentHeight - 1);
  const guardOverride = props.guardPercent;

  // What the latest frame showed, and how to work out what a snapshot would show now.
  const shown = useRef<Shown | undefined>(undefined);
  const measure = useCallback(
    (snap: FleetSnapshot, u: UiState, nowMs: number, withOverview: boolean): Shown => {
      const { data, connection } = snap;
      const chrome: unknown[] = [
        connection.state,
        connection.error,
        connection.state === 'live' ? undefined : connection.lastUpdateMs,
      ];
      const counts: unknown[] = [data.tasks?.size, data.cooldowns?.size, data.storesTotal, data.workers?.length];
      if (u.overlay === 'detail' && u.detail) {
        return { chrome, counts, view: detailSignature(u.detail.view, u.detail.key, data), overview: undefined };
      }
      if (u.overlay !== 'none') return { chrome, counts, view: [], overview: undefined };
      if (isList(u.view)) {
        const { view, size } = listSignature(u, u.view, data, lists, bodyHeight);
        return { chrome, counts: [...counts, ...size], view, overview: undefined };
      }
      return {
        chrome,
        counts,
        view: [],
        overview: withOverview ? overviewModel(data, nowMs, guardOverride) : undefined,
      };
    },
    [lists, bodyHeight, guardOverride],
  );
  // Not useSyncExternalStore: React re-renders for every snapshot it has not drawn (a tearing
  // check after each commit), which is what this gate is for: a change nobody would see draws no
  // frame. The render reads the latest snapshot; the subscription only decides when to render.
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const gate = useRef({ measure, clock });
  gate.current = { measure, clock };
  useEffect(() => {
    // A change of the tab counts alone waits for the next frame, at most until the clock's next
    // COUNTS_MS turns: with 100 changes a second they would otherwise move (and cost a frame) 20
    // times a second. At the turn the header's clock redraws too (useNow wakes then): one frame.
    let countsTimer: AbortController | undefined;
    const check = (): void => {
      const last = shown.current;
      if (!last) return redraw();
      const next = gate.current.measure(source.getSnapshot(), uiRef.current, gate.current.clock.now(), true);
      const changed =
        !sameItems(next.chrome, last.chrome) ||
        !sameItems(next.view, last.view) ||
        (next.overview !== undefined && (last.overview === undefined || !sameOverview(next.overview, last.overview)));
      if (changed) return redraw();
      if (sameItems(next.counts, last.counts) || countsTimer) return;
      const timer = new AbortController();
      countsTimer = timer;
      const { clock } = gate.current;
      const armed = clock.now();
      const turn = armed + untilNextPeriod(armed, COUNTS_MS);
      const frames = last.frames;
      void (async () => {
        await clock.sleep(turn - armed, timer.signal);
        // A timer can fire a little before its time (Node counts from the loop's cached time):
        // drawn before the turn, the counts would cost a frame of their own. (A frozen clock, in
        // tests, did not move: it is not waited for.)
        const early = turn - clock.now();
        if (early > 0 && clock.now() !== armed) await clock.sleep(early, timer.signal);
        countsTimer = undefined;
        // A frame drawn meanwhile (the clock's, at the turn) showed them; a change since arms
        // this again. Back as they were: nothing to do either.
        if (!shown.current || shown.current.frames !== frames) return;
        const now = gate.current.measure(source.getSnapshot(), uiRef.current, clock.now(), false);
        if (!sameItems(now.counts, shown.current.counts)) redraw();
      })().catch(() => undefined); // unmounted: the sleep was aborted
    };
    const unsubscribe = source.subscribe(check);
    // A change between the first render and this subscription.
    if (source.getSnapshot() !== shown.current?.snapshot) check();
    return () => {
      countsTimer?.abort();
      unsubscribe();
    };
  }, [source]);
  const snapshot = source.getSnapshot();
  const { data, connection } = snapshot;
  const dataRef = useRef(data);
  dataRef.current = data;
  const [history, setHistory] = useState<History | undefined>();
  const [actions, setActions] = useState<readonly Activity[]>([]);
  const { exit } = useApp();

  const listView: ListViewId | undefined = isList(ui.view) ? ui.view : undefined;
  const list = listView ? ui.lists[listView] : undefined;
  const spec = listView ? (LIST_SPECS[listView] as ListSpec<unknown>) : undefined;
  // Synced incrementally from the live maps' change logs: a change moves its row, no re-sort.
  const index = listView && list ? lists.sync(listView, data, list.filter, list.sort) : undefined;
  const selected = list && index ? selectedIndex(list, index) : -1;
  const start = listView && index ? lists.window(listView, selected, bodyHeight, index.length, true) : 0;
  const pageSize = Math.max(1, bodyHeight);
  const overview = useMemo(
    () => (listView ? undefined : overviewModel(data, now, guardOverride)),
    [listView, data, now, guardOverride],
  );
  const placed = useMemo(
    () => (spec ? layoutColumns(spec.columns, size.columns - MARK_WIDTH) : []),
    [spec, size.columns],
  );
  const cellContext: CellContext = useMemo(() => ({ now, data }), [now, data]);
  const rowDeps = useMemo(() => (spec?.rowDeps ? (row: unknown) => spec.rowDeps!(row, data) : undefined), [spec, data]);

  useLayoutEffect(() => {
    shown.current = {
      ...measure(snapshot, ui, now, false),
      overview,
      snapshot,
      frames: (shown.current?.frames ?? 0) + 1,
    };
  });

  const log = useCallback((entries: readonly Activity[]) => {
    setActions((a) => appendActivity(a, entries).slice(-MAX_ACTIVITY));
  }, []);

  const run = useCallback(
    (effect: Effect) => {
      if (effect.type === 'quit') {
        exit();
        props.onQuit?.();
      } else if (effect.type === 'load-detail') {
        const target = detailTarget(effect.view, effect.key, dataRef.current);
        if (target === undefined) return;
        setHistory({ target, tasks: undefined, error: undefined });
        props.api.history(target).then(
          (tasks) => setHistory((h) => (h?.target === target ? { target, tasks, error: undefined } : h)),
          (err: unknown) =>
            setHistory((h) => (h?.target === target ? { target, tasks: undefined, error: (err as Error).message } : h)),
        );
      } else {
        void execute(props.api, effect.action).then((notice) => {
          setUi((s) => ({ ...s, notice }));
          log([{ at: clock.now(), text: notice.text, tone: notice.tone }]);
          props.source.refresh();
        });
      }
    },
    [exit, props.api, props.source, props.onQuit, clock, log],
  );

  const keyContext = (): KeyContext => {
    const u = uiRef.current;
    const v = isList(u.view) ? u.view : undefined;
    const l = v ? u.lists[v] : undefined;
    return {
      keys: v && l ? lists.sync(v, dataRef.current, l.filter, l.sort) : [],
      pageSize,
      resolve: (view, ks, action) => resolveAction(view, ks, action, dataRef.current, clock.now()),
      exists: (view, k) => rowExists(view, k, dataRef.current),
    };
  };

  useInput((input, key) => {
    const effects: Effect[] = [];
    for (const press of splitInput({ ...key, input })) {
      // The filter changes the rows a key moves through: the context is read per key.
      const result = handleKey(uiRef.current, press, keyContext());
      uiRef.current = result.state;
      effects.push(...result.effects);
    }
    setUi(uiRef.current);
    for (const e of effects) run(e);
  });

  const counts: Partial<Record<ViewId, number>> = {
    ...(data.tasks ? { tasks: data.tasks.size } : {}),
    ...(data.cooldowns ? { cooldowns: data.cooldowns.size } : {}),
    ...(data.stores ? { stores: data.storesTotal } : {}),
    ...(data.workers ? { workers: data.workers.length } : {}),
  };

  let content: ReactNode;
  if (ui.overlay === 'help') {
    content = <Help readonly={ui.readonly} height={contentHeight} width={size.columns} />;
  } else if (ui.overlay === 'reason' && ui.confirm) {
    content = (
      <Box height={contentHeight} width={size.columns} flexDirection="column" alignItems="center" paddingTop={2}>
        <ReasonPrompt pending={ui.confirm} draft={ui.reasonDraft} width={size.columns} />
      </Box>
    );
  } else if (ui.overlay === 'confirm' && ui.confirm) {
    content = (
      <Box height={contentHeight} width={size.columns} flexDirection="column" alignItems="center" paddingTop={2}>
        <Confirm pending={ui.confirm} width={size.columns} />
      </Box>
    );
  } else if (ui.overlay === 'detail' && ui.detail) {
    content = (
      <Detail
        view={ui.detail.view}
        itemKey={ui.detail.key}
        data={data}
        history={history}
        now={now}
        width={size.columns}
        height={contentHeight}
      />
    );
  } else if (spec && list && index) {
    content = (
      <Table
        columns={placed}
        rows={index.rows.slice(start, start + bodyHeight)}
        offset={start}
        rowKey={spec.key}
        context={cellContext}
        deps={[now, data.policy]}
        rowDeps={rowDeps}
        selected={selected}
        marked={list.marked}
        width={size.columns}
        height={contentHeight}
        empty={!index.loaded ? 'loading…' : list.filter ? `nothing matches “${list.filter}”` : spec.empty}
      />
    );
  } else {
    content = (
      <Overview
        model={overview ?? overviewModel(data, now, guardOverride)}
        activity={mergeActivity(data.activity, actions)}
        now={now}
        width={size.columns}
        height={contentHeight}
      />
    );
  }

  let position = '';
  if (spec && list && index) {
    const total = index.total;
    const parts = [
      list.marked.size > 0 ? `${list.marked.size} marked` : '',
      list.filter && !ui.editingFilter ? `/${list.filter}` : '',
      `sort: ${spec.sorts[list.sort % spec.sorts.length]?.label ?? ''}`,
      `${index.length === 0 ? 0 : selected + 1}/${formatCount(index.length)}${index.length !== total ? ` of ${formatCount(total)}` : ''}`,
    ];
    position = parts.filter(Boolean).join('  ');
  }

  const theme = useMemo(() => props.theme ?? { color: true }, [props.theme]);
  if (size.columns < MIN_SIZE.columns || size.rows < MIN_SIZE.rows) {
    // Drawing the full layout would wrap every line into an unreadable mess.
    return (
      <Text>
        {`maintd-top needs at least ${MIN_SIZE.columns}×${MIN_SIZE.rows}; this terminal is ${size.columns}×${size.rows}. Enlarge it, or press q to quit.`}
      </Text>
    );
  }
  return (
    <ThemeRoot theme={theme}>
      <Box flexDirection="column" width={size.columns} height={size.rows - 1}>
        <Header url={props.url} connection={connection} readonly={ui.readonly} now={now} width={size.columns} />
        <Tabs view={ui.view} counts={counts} />
        {/* No clipping here: each view keeps to its height, and clipping costs every line a re-slice. */}
        <Box height={contentHeight}>{content}</Box>
        <StatusBar
          width={size.columns}
          editingFilter={ui.editingFilter}
          filter={list?.filter ?? ''}
          notice={ui.notice}
          hints={hintsFor(ui)}
          position={position}
        />
      </Box>
    </ThemeRoot>
  );
}

/** The stream's activity and the operator's own actions, in time order. */
function mergeActivity(stream: readonly Activity[], own: readonly Activity[]): readonly Activity[] {
  if (own.length === 0) return stream;
  if (stream.length === 0) return own;
  return [...stream, ...own].sort((a, b) => a.at - b.at).slice(-MAX_ACTIVITY);
}

/** The key hints of the status line for the current view. */
export function hintsFor(ui: UiState): string {
  if (ui.overlay === 'confirm') return 'y/Enter confirm · n/Esc cancel';
  if (ui.overlay === 'reason') return 'type the reason · Enter next · Esc cancel';
  if (ui.overlay === 'help') return 'Esc close';
  const actions = ui.readonly
    ? 'read-only'
    : ui.view === 'stores'
      ? 'r merge · x compact · c reset · p park · u release'
      : ui.view === 'cooldowns' || ui.view === 'tasks'
        ? 'r run · c reset · p park · u release'
        : '';
  if (ui.overlay === 'detail') return ['Esc back', actions, '? help', 'q quit'].filter(Boolean).join(' · ');
  if (!isList(ui.view)) return '1-5/Tab views · ? help · q quit';
  return ['j/k move', '/ filter', 's sort', 'Enter detail', 'Space mark', actions, '? help', 'q quit']
    .filter(Boolean)
    .join(' · ');
}

function rowByKey(view: ListViewId, key: string, data: FleetData): unknown {
  const spec = LIST_SPECS[view] as ListSpec<unknown>;
  return spec.source(data)?.get(key);
}

function rowExists(view: ListViewId, key: string, data: FleetData): boolean {
  return rowByKey(view, key, data) !== undefined;
}

/** The (kind, target) pairs an action on these rows applies to. */
export function resolveAction(
  view: ListViewId,
  keys: readonly string[],
  action: ActionKind,
  data: FleetData,
  now = Date.now(),
): ActionItem[] {
  const spec = LIST_SPECS[view] as ListSpec<unknown>;
  const make = spec.actions[action];
  if (!make) return [];
  return keys.flatMap((k) => {
    const row = rowByKey(view, k, data);
    return row === undefined ? [] : make(row, data, now);
  });
}

function detailTarget(view: ListViewId, key: string, data: FleetData): string | undefined {
  if (view === 'workers') return undefined;
  if (view === 'stores') return key;
  if (view === 'tasks') return data.tasks?.get(key)?.target;
  return data.cooldowns?.get(key)?.target ?? key.slice(key.indexOf('/') + 1);
}

/** How one item of an action went. */
interface ItemResult {
  readonly ok: boolean;
  readonly changed: boolean;
  readonly error?: string;
}

/**
 * Performs a confirmed action, a few requests at a time; the notice says how it went. Errors
 * from the master are reported in the notice, never thrown.
 */
export async function execute(
  api: ActionApi,
  pending: PendingAction,
): Promise<{ text: string; tone: 'ok' | 'bad' | 'info' }> {
  const { items, action } = pending;
  const results: ItemResult[] = [];
  const queue = [...items];
  const one = async (item: ActionItem): Promise<void> => {
    try {
      let changed: boolean;
      if (action === 'reset') changed = await api.resetCooldown(item.kind, item.target);
      else if (action === 'release') changed = await api.release(item.kind, item.target);
      else if (action === 'park') {
        await api.park(item.kind, item.target, pending.reason ?? '');
        changed = true;
      } else changed = (await api.enqueue(item.kind, item.target)).created;
      results.push({ ok: true, changed });
    } catch (err) {
      results.push({ ok: false, changed: false, error: `${item.target}: ${(err as Error).message}` });
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(ACTION_CONCURRENCY, queue.length) }, async () => {
      for (let item = queue.shift(); item; item = queue.shift()) await one(item);
    }),
  );
  const failed = results.filter((r) => !r.ok);
  const unchanged = results.filter((r) => r.ok && !r.changed).length;
  const done = results.length - failed.length;
  const n = items.length;
  const first = items[0]!;
  const single = n === 1 && done === 1;
  let text: string;
  if (action === 'reset') {
    text = single ? `reset the cooldown of ${first.kind} ${first.target}` : `reset ${done} of ${n} cooldowns`;
    if (unchanged > 0) text += ` (${unchanged} already cleared)`;
    if (failed.length > 0) text += `; failed: ${failed[0]!.error}`;
  } else if (action === 'park') {
    text = single ? `parked ${first.kind} ${first.target}: ${pending.reason ?? ''}` : `parked ${done} of ${n}`;
    if (failed.length > 0) text = `${describeAction(pending)} failed for ${failed.length}: ${failed[0]!.error}`;
  } else if (action === 'release') {
    text = single ? `released ${first.kind} ${first.target}` : `released ${done} of ${n}`;
    if (unchanged > 0) text += ` (${unchanged} not parked any more)`;
    if (failed.length > 0) text = `${describeAction(pending)} failed for ${failed.length}: ${failed[0]!.error}`;
  } else {
    text = single ? `enqueued ${first.kind} on ${first.target}` : `enqueued ${done} of ${n}`;
    if (unchanged > 0) text += ` (${unchanged} already queued or running)`;
    if (failed.length > 0) text = `${describeAction(pending)} failed for ${failed.length}: ${failed[0]!.error}`;
  }
  return { text, tone: failed.length > 0 ? 'bad' : 'ok' };
}
