/**
 * Mounts the App in ink-testing-library with a hand-set data source, a fake action API and a
 * fixed clock and size, and drives it with real key sequences.
 */
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { afterEach } from 'vitest';
import { type ActionApi } from '../src/actions.js';
import type { DetailAnswer } from '../src/api/client.js';
import { App, type AppProps } from '../src/App.js';
import type { BulkResult, Cooldown, Store, Task, TaskKind, Worker } from '../src/api/types.js';
import type { FleetSource } from '../src/data/source.js';
import type { Size } from '../src/hooks.js';
import { cooldownMap } from '../src/state/fleet.js';
import { EMPTY_FLEET, type FleetData } from '../src/state/fleet-data.js';
import { cooldown, master, policy } from './fake-master.js';
import { taskMap } from './task-map.js';
import { StaticFleetSource } from './static-source.js';

/** The fixed "now" of component tests: 2023-11-14T22:13:20Z plus a little. */
export const NOW = 1_700_000_000_000;

/** Key sequences as a terminal sends them. */
export const KEY = {
  enter: '\r',
  escape: '\u001b',
  tab: '\t',
  shiftTab: '\u001b[Z',
  up: '\u001b[A',
  down: '\u001b[B',
  pageDown: '\u001b[6~',
  pageUp: '\u001b[5~',
  home: '\u001b[H',
  end: '\u001b[F',
  backspace: '\u007f',
  space: ' ',
  ctrlC: '\u0003',
} as const;

/** Calls the fake API received. */
export interface ApiCall {
  readonly op: 'enqueue' | 'reset' | 'park' | 'release' | 'history' | 'detail' | 'bulk-park' | 'bulk-reset';
  readonly kind?: TaskKind;
  /** The store; for a bulk action, its search. */
  readonly target: string;
  readonly reason?: string;
  readonly dryRun?: boolean;
}

/** Options of {@link fakeApi}. */
export interface FakeApiOptions {
  /** Makes every call reject with this message. */
  readonly fail?: string;
  readonly history?: Task[];
  /** What the detail route answers (default: nothing there). */
  readonly detail?: DetailAnswer;
  /** What a bulk action answers: its count and first matches (`done` is the count, 0 on a dry run). */
  readonly bulk?: Pick<BulkResult, 'count' | 'entries'>;
  /** Makes the bulk calls reject with this error. */
  readonly bulkError?: Error;
}

/** A fake {@link ActionApi} that records calls; `fail` makes every call reject. */
export function fakeApi(options: FakeApiOptions = {}): ActionApi & { calls: ApiCall[] } {
  const calls: ApiCall[] = [];
  const maybeFail = (): void => {
    if (options.fail) throw new Error(options.fail);
  };
  return {
    calls,
    enqueue: (kind, target) => {
      calls.push({ op: 'enqueue', kind, target });
      maybeFail();
      return Promise.resolve({ created: true });
    },
    resetCooldown: (kind, target) => {
      calls.push({ op: 'reset', kind, target });
      maybeFail();
      return Promise.resolve(true);
    },
    park: (kind, target, reason) => {
      calls.push({ op: 'park', kind, target, reason });
      maybeFail();
      return Promise.resolve({});
    },
    release: (kind, target) => {
      calls.push({ op: 'release', kind, target });
      maybeFail();
      return Promise.resolve(true);
    },
    history: (target) => {
      calls.push({ op: 'history', target });
      maybeFail();
      return Promise.resolve(options.history ?? []);
    },
    cooldownDetail: (kind, target) => {
      calls.push({ op: 'detail', kind, target });
      maybeFail();
      return Promise.resolve(options.detail ?? { status: 'none' });
    },
    bulkPark: (filter, reason, dryRun) => bulk({ op: 'bulk-park', target: filter.q ?? '', reason, dryRun }),
    bulkReset: (filter, dryRun) => bulk({ op: 'bulk-reset', target: filter.q ?? '', dryRun }),
  };
  function bulk(call: ApiCall): Promise<BulkResult> {
    calls.push(call);
    if (options.bulkError) return Promise.reject(options.bulkError);
    const { count, entries } = options.bulk ?? { count: 0, entries: [] };
    return Promise.resolve({ dry_run: call.dryRun ?? false, count, done: call.dryRun ? 0 : count, entries });
  }
}

/** A task record. */
export function task(n: number, over: Partial<Task> = {}): Task {
  return {
    id: `01a23766-0000-7000-8000-${String(n).padStart(12, '0')}`,
    kind: 'merge_wal',
    target: `store-${n}`,
    state: 'done',
    source: 'sweep',
    enqueued_at: NOW - 60_000,
    started_at: NOW - 50_000,
    finished_at: NOW - 45_000,
    attempt: 1,
    detail: 'merged 12 generations across 2/2 workers',
    ...over,
  };
}

/** A store stats row. */
export function store(name: string, pending: number, fragments = 4): Store {
  return {
    name,
    pending_wal_generations: pending,
    fragment_count: fragments,
    row_count: 1_000_000,
    owners: ['http://w1:8080'],
    scanned_at: NOW - 5000,
    cooldowns: [],
  };
}

/** A small fleet with something in every view, including the incident's broken store. */
export function sampleFleet(): FleetData {
  const cds: Cooldown[] = [
    cooldown('broken-store', {
      failures: 4,
      until_ms: NOW + 600_000,
      last_failure_ms: NOW - 30_000,
      last_error:
        'http://w1:8080: HTTP 500: Not found: /srv/stores/broken-store/data/4b1d2c9e.lance (merged 0 generations across 0/2 workers)',
    }),
    cooldown('flaky-store', { failures: 1, until_ms: null, last_error: 'HTTP 500: disk full' }),
  ];
  const workers: Worker[] = [
    { endpoint: 'http://w1:8080', ok: true, error: null, last_scan_at: NOW - 2000, stores: 3 },
    { endpoint: 'http://w2:8080', ok: false, error: 'connection refused', last_scan_at: NOW - 2000, stores: 0 },
  ];
  return {
    ...EMPTY_FLEET,
    masters: [master('master-a')],
    workers,
    stores: [store('broken-store', 7985, 41), store('orders-eu', 40), store('orders-us', 12)],
    storesTotal: 3,
    cooldowns: cooldownMap(cds),
    tasks: taskMap([
      task(1),
      task(2, {
        target: 'broken-store',
        state: 'failed',
        detail: undefined,
        error: cds[0]!.last_error,
        error_class: 'target',
      }),
      task(3, { target: 'orders-eu', state: 'running', finished_at: undefined, detail: undefined, owner: 'master-a' }),
      task(4, {
        target: 'orders-us',
        state: 'queued',
        started_at: undefined,
        finished_at: undefined,
        detail: undefined,
      }),
    ]),
    counts: {
      merge_wal: { queued: 1, running: 1 },
      compact: { queued: 0, running: 0 },
      index_id: { queued: 0, running: 0 },
    },
    guardOverflow: { merge_wal: 0, compact: 0, index_id: 0 },
    policy: policy(),
  };
}

/** Options of {@link mountApp}. */
export interface MountOptions extends Partial<Omit<AppProps, 'source' | 'api'>> {
  readonly data?: FleetData;
  /** A real data source instead of the hand-set one. */
  readonly feed?: FleetSource;
  readonly api?: ReturnType<typeof fakeApi>;
  readonly size?: Size;
}

/** The App under test. */
export function mountApp(options: MountOptions = {}) {
  const source = new StaticFleetSource(options.data ?? sampleFleet(), { lastUpdateMs: NOW });
  const api = options.api ?? fakeApi();
  let now = NOW;
  const { data: _data, api: _api, feed, ...props } = options;
  const size = options.size ?? { columns: 100, rows: 24 };
  const clockNow = (): number => now;
  const tree = (
    <App
      source={feed ?? source}
      api={api}
      url="http://master:8090"
      size={size}
      now={clockNow}
      tickMs={options.tickMs ?? 60_000}
      theme={options.theme ?? { color: false }}
      {...props}
    />
  );
  const ink = render(tree);
  // ink-testing-library's terminal is 100 columns wide; Ink lays the screen out at that width.
  Object.defineProperty(ink.stdout, 'columns', { value: size.columns });
  ink.rerender(tree);
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 5));
  };
  return {
    source,
    api,
    /** The last frame as plain text. */
    frame: (): string => stripVTControlCharacters(ink.lastFrame() ?? ''),
    /** How many frames Ink has drawn so far. */
    frameCount: (): number => ink.frames.length,
    /** The last frame with its escape codes. */
    raw: (): string => ink.lastFrame() ?? '',
    lines: (): string[] => stripVTControlCharacters(ink.lastFrame() ?? '').split('\n'),
    /** Types keys, one write each, letting the app settle after each. */
    press: async (...keys: string[]): Promise<void> => {
      for (const k of keys) {
        ink.stdin.write(k);
        await settle();
      }
    },
    settle,
    setNow: (t: number): void => {
      now = t;
    },
    unmount: (): void => ink.unmount(),
  };
}

/**
 * A `mountApp` whose apps are unmounted after each test: call once at the top of a test file,
 * so that no test leaves an app rendering into the next one.
 */
export function mountedEach(): (options?: MountOptions) => ReturnType<typeof mountApp> {
  const mounted: ReturnType<typeof mountApp>[] = [];
  afterEach(() => {
    for (const m of mounted.splice(0)) m.unmount();
  });
  return (options) => {
    const m = mountApp(options);
    mounted.push(m);
    return m;
  };
}
