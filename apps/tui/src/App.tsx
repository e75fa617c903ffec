import { type Clock, systemClock } from '@maintd/core';
import { Box, Text, useApp, useInput } from 'ink';
import { type ReactNode, useCallback, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import type { Task, TaskKind } from './api/types.js';
import { Confirm } from './components/Confirm.js';
import { Detail, type History } from './components/Detail.js';
import { Header, Help, StatusBar, Tabs } from './components/Chrome.js';
import { Table } from './components/Table.js';
import type { FleetSource } from './data/source.js';
import { formatCount } from './format.js';
import { MIN_SIZE, type Size, useNow, useTerminalSize } from './hooks.js';
import type { FleetData } from './state/fleet.js';
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
import { Overview } from './views/Overview.js';
import {
  type ActionItem,
  type ActionKind,
  type CellContext,
  LIST_SPECS,
  type ListSpec,
  type ListViewId,
  type ViewId,
  deriveRows,
} from './views/specs.js';

/** The operations the dashboard performs on the master (a {@link MaintdClient} in production). */
export interface ActionApi {
  enqueue(kind: TaskKind, target: string): Promise<{ readonly created: boolean }>;
  resetCooldown(kind: TaskKind, target: string): Promise<boolean>;
  history(target: string): Promise<Task[]>;
}

/** Props of {@link App}. */
export interface AppProps {
  readonly source: FleetSource;
  readonly api: ActionApi;
  /** Shown in the header. */
  readonly url: string;
  readonly readonly?: boolean;
  /** TASK_COOLDOWN_MAX_PERCENT of the masters, for the Overview's guard gauge. */
  readonly guardPercent?: number;
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

/** The dashboard. All state transitions are {@link handleKey}; this wires data, keys and effects. */
export function App(props: AppProps): ReactNode {
  const base = props.clock ?? systemClock;
  const { now: fixedNow } = props;
  const clock = useMemo(
    (): Clock => (fixedNow ? { now: fixedNow, sleep: (ms, signal) => base.sleep(ms, signal) } : base),
    [base, fixedNow],
  );
  const now = useNow(clock, props.tickMs ?? 1000);
  const size = useTerminalSize(props.size);
  const { source } = props;
  const subscribe = useCallback((listener: () => void) => source.subscribe(listener), [source]);
  const snapshot = useSyncExternalStore(subscribe, () => source.getSnapshot());
  const { data, connection } = snapshot;
  const [ui, setUi] = useState<UiState>(() =>
    initialUi({ readonly: props.readonly ?? false, ...(props.initialView ? { view: props.initialView } : {}) }),
  );
  const uiRef = useRef(ui);
  uiRef.current = ui;
  const dataRef = useRef(data);
  dataRef.current = data;
  const [history, setHistory] = useState<History | undefined>();
  const { exit } = useApp();

  const contentHeight = size.rows - CHROME_ROWS;
  const listView: ListViewId | undefined = isList(ui.view) ? ui.view : undefined;
  const list = listView ? ui.lists[listView] : undefined;
  const spec = listView ? (LIST_SPECS[listView] as ListSpec<unknown>) : undefined;
  // Filtering and sorting run when the data, filter or sort change, never on a clock tick.
  const all = useMemo(() => spec?.rows(data), [spec, data]);
  const rows = useMemo(
    () => (spec && list ? deriveRows(spec, data, list.filter, list.sort, all) : []),
    [spec, data, list?.filter, list?.sort, all],
  );
  const keys = useMemo(() => (spec ? rows.map((r) => spec.key(r)) : []), [spec, rows]);
  const selected = list ? selectedIndex(list, keys) : -1;
  const pageSize = Math.max(1, contentHeight - 1);
  const cellContext: CellContext = useMemo(() => ({ now, data }), [now, data]);

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
          props.source.refresh();
        });
      }
    },
    [exit, props.api, props.source, props.onQuit],
  );

  useInput((input, key) => {
    const ctx: KeyContext = {
      keys,
      pageSize,
      resolve: (view, ks, action) => resolveAction(view, ks, action, dataRef.current),
      exists: (view, k) => rowExists(view, k, dataRef.current),
    };
    const effects: Effect[] = [];
    for (const press of splitInput({ ...key, input })) {
      const result = handleKey(uiRef.current, press, ctx);
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
  } else if (spec && list) {
    const loading = all === undefined;
    content = (
      <Table
        columns={spec.columns}
        rows={rows}
        rowKey={spec.key}
        context={cellContext}
        selected={selected}
        marked={list.marked}
        contextVersion={spec.cellsUseData ? cellContext : now}
        width={size.columns}
        height={contentHeight}
        empty={loading ? 'loading…' : list.filter ? `nothing matches “${list.filter}”` : spec.empty}
      />
    );
  } else {
    content = (
      <Overview
        data={data}
        now={now}
        width={size.columns}
        height={contentHeight}
        guardPercent={props.guardPercent ?? 25}
      />
    );
  }

  let position = '';
  if (spec && list) {
    const total = all?.length ?? 0;
    const parts = [
      list.marked.size > 0 ? `${list.marked.size} marked` : '',
      list.filter && !ui.editingFilter ? `/${list.filter}` : '',
      `sort: ${spec.sorts[list.sort % spec.sorts.length]?.label ?? ''}`,
      `${rows.length === 0 ? 0 : selected + 1}/${formatCount(rows.length)}${rows.length !== total ? ` of ${formatCount(total)}` : ''}`,
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

/** The key hints of the status line for the current view. */
export function hintsFor(ui: UiState): string {
  if (ui.overlay === 'confirm') return 'y/Enter confirm · n/Esc cancel';
  if (ui.overlay === 'help') return 'Esc close';
  const actions = ui.readonly
    ? 'read-only'
    : ui.view === 'stores'
      ? 'r merge · x compact · c reset'
      : ui.view === 'cooldowns' || ui.view === 'tasks'
        ? 'r run · c reset'
        : '';
  if (ui.overlay === 'detail') return ['Esc back', actions, '? help', 'q quit'].filter(Boolean).join(' · ');
  if (!isList(ui.view)) return '1-5/Tab views · ? help · q quit';
  return ['j/k move', '/ filter', 's sort', 'Enter detail', 'Space mark', actions, '? help', 'q quit']
    .filter(Boolean)
    .join(' · ');
}

function rowsByKey(view: ListViewId, data: FleetData): Map<string, unknown> {
  const spec = LIST_SPECS[view] as ListSpec<unknown>;
  return new Map((spec.rows(data) ?? []).map((r) => [spec.key(r), r]));
}

function rowExists(view: ListViewId, key: string, data: FleetData): boolean {
  if (view === 'cooldowns') return data.cooldowns?.has(key) ?? false;
  if (view === 'tasks') return data.tasks?.has(key) ?? false;
  return rowsByKey(view, data).has(key);
}

/** The (kind, target) pairs an action on these rows applies to. */
export function resolveAction(
  view: ListViewId,
  keys: readonly string[],
  action: ActionKind,
  data: FleetData,
): ActionItem[] {
  const spec = LIST_SPECS[view] as ListSpec<unknown>;
  const make = spec.actions[action];
  if (!make) return [];
  const byKey = rowsByKey(view, data);
  return keys.flatMap((k) => {
    const row = byKey.get(k);
    return row === undefined ? [] : make(row, data);
  });
}

function detailTarget(view: ListViewId, key: string, data: FleetData): string | undefined {
  if (view === 'workers') return undefined;
  if (view === 'stores') return key;
  if (view === 'tasks') return data.tasks?.get(key)?.target;
  return data.cooldowns?.get(key)?.target ?? key.slice(key.indexOf('/') + 1);
}

/** Performs a confirmed action, a few requests at a time; the notice says how it went. */
export async function execute(
  api: ActionApi,
  pending: PendingAction,
): Promise<{ text: string; tone: 'ok' | 'bad' | 'info' }> {
  const { items, action } = pending;
  const results: { ok: boolean; changed: boolean; error?: string }[] = [];
  const queue = [...items];
  const one = async (item: ActionItem): Promise<void> => {
    try {
      if (action === 'reset') {
        const changed = await api.resetCooldown(item.kind, item.target);
        results.push({ ok: true, changed });
      } else {
        const { created } = await api.enqueue(item.kind, item.target);
        results.push({ ok: true, changed: created });
      }
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
  if (action === 'reset') {
    let text =
      n === 1 && done === 1
        ? `reset the cooldown of ${items[0]!.kind} ${items[0]!.target}`
        : `reset ${done} of ${n} cooldowns`;
    if (unchanged > 0) text += ` (${unchanged} already cleared)`;
    if (failed.length > 0) text += `; failed: ${failed[0]!.error}`;
    return { text, tone: failed.length > 0 ? 'bad' : 'ok' };
  }
  let text = n === 1 && done === 1 ? `enqueued ${items[0]!.kind} on ${items[0]!.target}` : `enqueued ${done} of ${n}`;
  if (unchanged > 0) text += ` (${unchanged} already queued or running)`;
  if (failed.length > 0) text = `${describeAction(pending)} failed for ${failed.length}: ${failed[0]!.error}`;
  return { text, tone: failed.length > 0 ? 'bad' : 'ok' };
}
