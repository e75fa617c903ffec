import { type Clock, systemClock } from '@maintd/core';
import { Box, Text, useApp, useInput } from 'ink';
import { type ReactNode, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { type ActionApi, detailTarget, execute, preview, resolveAction, rowExists } from './actions.js';
import { Confirm, ReasonPrompt } from './components/Confirm.js';
import { Detail, type History } from './components/Detail.js';
import type { TimelineState } from './components/Timeline.js';
import { Header, Help, StatusBar, Tabs } from './components/Chrome.js';
import { MARK_WIDTH, Table } from './components/Table.js';
import type { FleetSource } from './data/source.js';
import { MIN_SIZE, type Size, useNow, useTerminalSize } from './hooks.js';
import { useRedrawGate } from './redraw-gate.js';
import { type Activity, MAX_ACTIVITY, appendActivity, withOwnActivity } from './state/activity.js';
import { ownRefs } from './state/audit-lines.js';
import { previewed } from './state/bulk.js';
import { ListViews } from './views/lists.js';
import { type KeyContext, handleKey, initialUi, isList, selectedIndex, splitInput } from './state/ui.js';
import { overviewSelected } from './state/overview-keys.js';
import { overviewRowKeys } from './common/overview-rows.js';
import type { Effect, UiState } from './state/ui-state.js';
import { hintsFor, listPosition } from './status-line.js';
import { type Theme, ThemeRoot } from './theme.js';
import { layoutColumns } from './views/columns.js';
import { Overview, overviewModel } from './views/Overview.js';
import type { CellContext, ListSpec } from './views/list-spec.js';
import { LIST_SPECS } from './views/specs.js';
import type { ListViewId, ViewId } from './common/view-ids.js';
import type { FleetData } from './state/fleet-data.js';

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

function overviewKeysOf(data: FleetData): string[] {
  return overviewRowKeys(data.capacity, data.causes);
}

/** Rows above and below the view: header, tabs, status line, and the line Ink keeps free. */
const CHROME_ROWS = 4;

/**
 * The dashboard. All key handling is {@link handleKey}; this wires data, keys and effects. A
 * data change that changes nothing on screen draws no frame ({@link useRedrawGate}).
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

  const drawn = useRedrawGate({ source, clock, ui: uiRef, lists, bodyHeight, guardPercent: guardOverride });
  const snapshot = source.getSnapshot();
  const { data, connection } = snapshot;
  const dataRef = useRef(data);
  dataRef.current = data;
  const [history, setHistory] = useState<History | undefined>();
  const [timeline, setTimeline] = useState<TimelineState | undefined>();
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

  useLayoutEffect(() => drawn(snapshot, ui, now, overview));

  // The Tasks view's search is the master's too (`q=`): older matches than the newest page.
  const taskSearch = ui.lists.tasks.filter.trim();
  useEffect(() => source.search?.('tasks', taskSearch), [source, taskSearch]);

  const activity = useMemo(() => withOwnActivity(data.activity, actions), [data.activity, actions]);
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
        const loadHistory = (): void => {
          setHistory({ target, tasks: undefined, error: undefined });
          props.api.history(target).then(
            (tasks) => setHistory((h) => (h?.target === target ? { target, tasks, error: undefined } : h)),
            (err: unknown) =>
              setHistory((h) =>
                h?.target === target ? { target, tasks: undefined, error: (err as Error).message } : h,
              ),
          );
        };
        if (effect.view !== 'cooldowns') return loadHistory();
        // A cooldown's pane: its timeline in one request; the task history only from a master
        // that predates the route.
        const { key } = effect;
        const kind = key.slice(0, key.indexOf('/'));
        const loaded = (next: TimelineState): void => setTimeline((t) => (t?.key === key ? next : t));
        setTimeline({ key, status: 'loading', events: [] });
        props.api.cooldownDetail(kind, target).then(
          (answer) => {
            if (answer.status === 'unsupported') loadHistory();
            loaded({ key, status: answer.status, events: answer.status === 'ok' ? answer.detail.timeline : [] });
          },
          (err: unknown) => loaded({ key, status: 'error', events: [], error: (err as Error).message }),
        );
      } else if (effect.type === 'preview') {
        const pending = effect.action;
        void preview(props.api, pending).then((answer) => {
          if ('text' in answer) {
            setUi((s) => ({ ...s, notice: answer }));
            log([{ at: clock.now(), text: answer.text, tone: answer.tone }]);
          } else {
            // The latest state, not the render's: keys pressed meanwhile count.
            uiRef.current = previewed(uiRef.current, pending, answer);
            setUi(uiRef.current);
          }
        });
      } else {
        void execute(props.api, effect.action).then((notice) => {
          setUi((s) => ({ ...s, notice }));
          // What it acted on: the audit trail's lines of it are marked as this dashboard's.
          const subject = { source: 'own' as const, keys: ownRefs(effect.action) };
          log([{ at: clock.now(), text: notice.text, tone: notice.tone, subject }]);
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
      // The Overview's selectable rows: its top consumers and causes.
      keys: v && l ? lists.sync(v, dataRef.current, l.filter, l.sort) : overviewKeysOf(dataRef.current),
      pageSize,
      resolve: (view, ks, action) => resolveAction(view, ks, action, dataRef.current, clock.now()),
      pick: (view, action) => (LIST_SPECS[view] as ListSpec<unknown>).picks?.[action],
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
        timeline={timeline}
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
    const keys = overviewKeysOf(data);
    content = (
      <Overview
        selected={keys[overviewSelected(ui.overview, keys)]}
        model={overview ?? overviewModel(data, now, guardOverride)}
        activity={activity}
        now={now}
        width={size.columns}
        height={contentHeight}
      />
    );
  }

  const position = spec && list && index ? listPosition(list, spec, index, selected, ui.editingFilter) : '';

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
