/**
 * pnpm bench:tui — maintd-top's frame cost and CPU with a fleet of 10,000 cooldowns.
 *
 * 1. Frame time: the dashboard's Cooldowns view over 10,000 cooldowns and 10,000 stores,
 *    rendered by Ink in debug mode (every frame drawn synchronously, in full), timed from the
 *    data change (or key press) to the frame written — or, for a change that leaves the screen
 *    alike (the dashboard draws no frame for it), to the moment it was handled. Baseline: the
 *    same dashboard with an empty fleet, measured in the same run.
 * 2. Live: the real feed (paged HTTP reads + /events) against a fake master in a child process
 *    that streams 100 cooldown and task changes per second, drawn by Ink as in a terminal (its
 *    frame cap); the TUI process's CPU, React and Ink time per frame, and event-loop delay.
 *
 * Goals (issue 16): ≤ 16 ms per frame (p95) at 80×24, 120×40 and 160×48; CPU under 10 % of a
 * core at 100 changes/s.
 *
 * What it measures is `@maintd/tui` as a user's `npm i` installs it: packed with `pnpm pack`
 * (with `@maintd/core`, which it depends on) and installed with npm into a scratch directory, where
 * none of the workspace's node_modules or patches apply (apps/tui/test/installed.ts); it drives the
 * building blocks the installed bundle exports. BENCH_TUI_DIST=<path of a dist/index.js> runs the
 * same measurements against another build instead: the workspace's own (apps/tui/dist/index.js),
 * or a copy of an earlier commit's, for before/after figures from one machine.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cooldown, startFakeMaster } from '../apps/tui/test/fake-master.js';
import { installPackedTui } from '../apps/tui/test/installed.js';
import { StaticFleetSource } from '../apps/tui/test/static-source.js';
import type * as TuiModule from '../apps/tui/dist/index.js';
import type { Cooldown, FleetData, FleetSource, MaintdEvent, Store, Task } from '../apps/tui/dist/index.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const COOLDOWNS = 10_000;
const EVENTS_PER_SECOND = Number(process.env.BENCH_EVENTS_PER_SECOND ?? 100);
/** Terminal sizes measured; the live run uses the middle one. */
const SIZES = [
  { columns: 80, rows: 24 },
  { columns: 120, rows: 40 },
  { columns: 160, rows: 48 },
] as const;
const LIVE_SIZE = SIZES[1];
const NOW = 1_700_000_000_000;

const name = (i: number): string => `store-${String(i).padStart(5, '0')}`;

function fleetCooldowns(now: number): Cooldown[] {
  return Array.from({ length: COOLDOWNS }, (_, i) =>
    cooldown(name(i), {
      kind: i % 4 === 0 ? 'compact' : 'merge_wal',
      failures: 1 + (i % 9),
      // Most cooling, some counting below the threshold: every state on screen. The first few
      // have the longest windows: the rows on screen, at the top of the view.
      until_ms:
        i < ON_SCREEN ? now + 30 * 3600_000 - i : i % 5 === 0 ? null : now + 1000 * (60 + ((i * 7919) % 21_600)),
      last_failure_ms: now - (i % 3600) * 1000,
      // Cause first, as the master writes a failure.
      last_error: `http://worker-${i % 12}:8080: HTTP 500: Not found: /srv/stores/${name(i)}/data/${(i * 2654435761) % 4294967296}.lance (merged 0 generations across 0/3 workers)`,
    }),
  );
}

function fleetStores(): Omit<Store, 'cooldowns'>[] {
  return Array.from({ length: COOLDOWNS }, (_, i) => ({
    name: name(i),
    pending_wal_generations: (i * 31) % 8000,
    fragment_count: 1 + (i % 64),
    row_count: i * 1000,
    owners: [`http://worker-${i % 12}:8080`],
    scanned_at: NOW,
  }));
}

/** Stores whose rows the frame measurement keeps at the top of the Cooldowns view, on screen. */
const ON_SCREEN = 10;

function changeEvent(n: number, now: number): MaintdEvent {
  // The live changes leave the rows on screen alone: the frame measurement changes those itself.
  const i = ON_SCREEN + ((n * 7) % (COOLDOWNS - ON_SCREEN));
  if (n % 5 === 4) {
    const task: Task = {
      id: `01a23766-${String(n % 10000).padStart(4, '0')}-7000-8000-${String(n).padStart(12, '0')}`,
      kind: 'merge_wal',
      target: name(i),
      state: n % 2 ? 'failed' : 'done',
      source: 'sweep',
      enqueued_at: now - 2000,
      started_at: now - 1000,
      finished_at: now,
      attempt: 1,
      ...(n % 2
        ? { error: 'HTTP 500: Not found', error_class: 'target' as const }
        : { detail: 'merged 9 generations' }),
    };
    return { type: 'task', revision: n, task };
  }
  const c = cooldown(name(i), {
    kind: i % 4 === 0 ? 'compact' : 'merge_wal',
    failures: 2 + (n % 7),
    until_ms: now + 600_000 + (n % 1000) * 1000,
    last_failure_ms: now,
  });
  return { type: 'cooldown', revision: n, kind: c.kind, target: c.target, cooldown: n % 50 === 3 ? null : c };
}

/** The fake master, in a child process so that its CPU is not the TUI's. */
async function runFakeMaster(): Promise<void> {
  const now = Date.now();
  const fake = await startFakeMaster({ stores: fleetStores() });
  for (const c of fleetCooldowns(now)) fake.state.cooldowns.set(`${c.kind}/${c.target}`, c);
  process.stdout.write(`${fake.url}\n`);
  let n = 0;
  // 100 changes per second, one every 10 ms, as a busy fleet would send them.
  // BENCH_EVENTS_PER_SECOND=0: the dashboard's cost with a quiet fleet (polls and the clock alone).
  if (EVENTS_PER_SECOND > 0) setInterval(() => fake.emit(changeEvent(n++, Date.now())), 1000 / EVENTS_PER_SECOND);
}

/** A terminal stand-in: a TTY of a fixed size that counts what is written. */
class FakeTty extends EventEmitter {
  readonly isTTY = true;
  readonly columns: number;
  readonly rows: number;
  constructor(size: { columns: number; rows: number }) {
    super();
    this.columns = size.columns;
    this.rows = size.rows;
  }
  bytes = 0;
  writes = 0;
  lastWriteAt = 0;
  onWrite: (() => void) | undefined;
  write = (chunk: string): boolean => {
    this.bytes += chunk.length;
    this.writes++;
    this.lastWriteAt = performance.now();
    this.onWrite?.();
    return true;
  };
}

/** Keys for Ink: a TTY stdin fed by hand. */
class FakeStdin extends EventEmitter {
  readonly isTTY = true;
  #data: string | null = null;
  write(data: string): void {
    this.#data = data;
    this.emit('readable');
  }
  read = (): string | null => {
    const d = this.#data;
    this.#data = null;
    return d;
  };
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (x: number): string => x.toFixed(2);

async function main(): Promise<void> {
  // React and Ink's reconciler choose their build when first loaded: production, as the binary.
  process.env.NODE_ENV = 'production';
  const other = process.env.BENCH_TUI_DIST;
  const installed = other ? undefined : await installPackedTui();
  // Deleted however the run ends: main() leaves through process.exit.
  if (installed) process.once('exit', () => rmSync(installed.dir, { recursive: true, force: true }));
  // eslint-disable-next-line no-restricted-syntax -- the build to measure is chosen at run time
  const tui = (await import(pathToFileURL(other ?? installed!.main).href)) as typeof TuiModule;
  const { renderDashboard, applyEvents, cooldownMap, EMPTY_FLEET, FleetFeed, MaintdClient } = tui;

  console.log(`maintd-top benchmark — ${COOLDOWNS.toLocaleString('en-US')} cooldowns and stores`);
  console.log(
    installed
      ? `measured: ${installed.name}@${installed.version}, installed with npm from its packed tarball`
      : `measured: the build at ${other} (BENCH_TUI_DIST)`,
  );

  // 1. Frame time, synchronous (BENCH_PHASES=live skips it).
  const full: FleetData = {
    ...EMPTY_FLEET,
    cooldowns: cooldownMap(fleetCooldowns(NOW)),
    stores: fleetStores().map((s) => ({ ...s, cooldowns: [] })),
    storesTotal: COOLDOWNS,
    tasks: new Map(),
  };
  interface FrameResult {
    /** Each change → its frame written, or → handled when it drew none. */
    readonly change: number[];
    /** Changes that drew a frame. */
    drawn: number;
    readonly key: number[];
    readonly ink: number[];
  }
  const measure = async (
    data: FleetData,
    size: { columns: number; rows: number },
    events: boolean,
  ): Promise<FrameResult> => {
    let lastInk = 0;
    const source = new StaticFleetSource(data);
    const stdout = new FakeTty(size);
    const stdin = new FakeStdin();
    const app = renderDashboard({
      source,
      api: {
        enqueue: () => Promise.reject(new Error('bench')),
        resetCooldown: () => Promise.reject(new Error('bench')),
        park: () => Promise.reject(new Error('bench')),
        release: () => Promise.reject(new Error('bench')),
        history: () => Promise.resolve([]),
        cooldownDetail: () => Promise.resolve({ status: 'none' }),
        bulkPark: () => Promise.reject(new Error('bench')),
        bulkReset: () => Promise.reject(new Error('bench')),
      },
      url: 'http://bench',
      size,
      now: () => NOW,
      tickMs: 3_600_000,
      initialView: 'cooldowns',
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: stdin as unknown as NodeJS.ReadStream,
      debug: true,
      patchConsole: false,
      onRender: ({ renderTime }) => (lastInk = renderTime),
    });
    const result: FrameResult = { change: [], drawn: 0, key: [], ink: [] };
    let d = data;
    let n = 0;
    // From the change (or key) to the frame written, scheduling included: React renders in a
    // microtask or a scheduler task (a setImmediate); Ink in debug mode writes the frame at the
    // end of that render. A change that draws nothing is timed to when it was handled: the
    // synchronous work of the change plus the scheduler turns that could have drawn it.
    const frame = async (act: () => void): Promise<{ ms: number; drawn: boolean }> => {
      const before = stdout.writes;
      const t0 = performance.now();
      act();
      let handled = performance.now();
      for (let idle = 0; stdout.writes === before && idle < 3 && performance.now() < t0 + 200; idle++) {
        await new Promise((r) => setImmediate(r));
        if (stdout.writes === before) handled = performance.now();
      }
      return stdout.writes === before
        ? { ms: handled - t0, drawn: false }
        : { ms: stdout.lastWriteAt - t0, drawn: true };
    };
    for (let i = 0; i < 300; i++) {
      // 100 updates per second, applied in batches of 25 (the feed batches what arrives in its
      // flush period: 5 per 50 ms today, 25 per 250 ms before; 25 is the harder case per frame).
      // One of them is to a row on screen (the dashboard draws nothing for changes off screen,
      // which left no frame to time): the longest window, its failure count moving.
      const onScreen = cooldown(name(i % ON_SCREEN), {
        kind: (i % ON_SCREEN) % 4 === 0 ? 'compact' : 'merge_wal',
        failures: 10 + (i % 7),
        until_ms: NOW + 30 * 3600_000 - (i % ON_SCREEN),
        last_failure_ms: NOW,
      });
      const batch: MaintdEvent[] = [
        ...Array.from({ length: 24 }, () => changeEvent(n++, NOW)),
        { type: 'cooldown', revision: n++, kind: onScreen.kind, target: onScreen.target, cooldown: onScreen },
      ];
      const t = await frame(() => {
        if (events) source.set({ data: (d = applyEvents(d, batch)) });
        // The baseline's change is one the screen shows at once (the header's connection line):
        // the cost of a frame of the empty dashboard.
        else source.set({ connection: { error: i % 2 ? 'read failed' : undefined } });
      });
      const inkOfChange = lastInk;
      const k = await frame(() => stdin.write(i % 20 < 10 ? 'j' : 'k'));
      if (i >= 50) {
        result.change.push(t.ms);
        if (t.drawn) {
          result.drawn++;
          result.ink.push(inkOfChange);
        }
        if (k.drawn) result.key.push(k.ms);
      }
    }
    app.unmount();
    return result;
  };
  const phases = process.env.BENCH_PHASES ?? 'frame,live';
  if (phases.includes('frame')) {
    console.log(
      '\n## Frame time: 25 changes applied, one of them on screen (or a key) → frame written (or handled, when nothing on screen changed), Cooldowns view\n',
    );
    console.log(
      '| terminal | empty fleet p50 ms (baseline) | 10,000 cooldowns p50 / p95 / max ms | changes that drew a frame | of which Ink p50 ms | key p50 / p95 ms | ratio to baseline (p50) | goal ≤ 16 ms (p95) |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---|');
    // Unrecorded: the first run of a process pays for compiling the hot paths, which a dashboard
    // that has run for a minute has long paid; without it, the first size measured pays it.
    await measure(full, SIZES[0], true);
    for (const size of SIZES) {
      const base = await measure({ ...EMPTY_FLEET, cooldowns: new Map(), stores: [], tasks: new Map() }, size, false);
      const big = await measure(full, size, true);
      const p95 = Math.max(pct(big.change, 95), pct(big.key, 95));
      console.log(
        `| ${size.columns}×${size.rows} | ${ms(pct(base.change, 50))} | ${ms(pct(big.change, 50))} / ${ms(pct(big.change, 95))} / ${ms(Math.max(...big.change))} | ${big.drawn}/${big.change.length} | ${ms(pct(big.ink, 50))} | ${ms(pct(big.key, 50))} / ${ms(pct(big.key, 95))} | ${(pct(big.change, 50) / pct(base.change, 50)).toFixed(1)} | ${p95 <= 16 ? 'met' : 'MISSED'} (${ms(p95)}) |`,
      );
    }
  }

  // 2. Live: real HTTP and /events against a fake master in a child process.
  if (!phases.includes('live')) process.exit(0);
  const child: ChildProcess = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), '--fake-master'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`fake master exited (${code})`)));
    });
    // Every request through the binary's own transport (an older build, BENCH_TUI_DIST, may predate it).
    const Transport = (tui as Partial<typeof TuiModule>).MasterTransport;
    const transport = Transport ? new Transport() : undefined;
    const client = new MaintdClient({ url, timeoutMs: 5000, fetch: transport?.fetch });
    const feed = new FleetFeed({ client, refreshMs: 2000, fetch: transport?.fetch });
    const frameTimes: number[] = [];
    const inkTimes: number[] = [];
    let updates = 0;
    const stdout = new FakeTty(LIVE_SIZE);
    // Times each update from the App's listener to the next frame reaching the terminal. The App
    // draws only updates that change the screen, in a scheduler task after the update, and Ink's
    // frame cap may hold a frame back; an update followed by another before any frame drew
    // nothing and is not timed.
    let pending: number | undefined;
    stdout.onWrite = () => {
      if (pending !== undefined) frameTimes.push(performance.now() - pending);
      pending = undefined;
    };
    const timed: FleetSource = {
      subscribe: (l) =>
        feed.subscribe(() => {
          updates++;
          pending = performance.now();
          l();
        }),
      getSnapshot: () => feed.getSnapshot(),
      refresh: () => feed.refresh(),
    };
    feed.start();
    const app = renderDashboard({
      source: timed,
      api: client,
      url,
      size: LIVE_SIZE,
      initialView: 'cooldowns',
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: new FakeStdin() as unknown as NodeJS.ReadStream,
      onRender: ({ renderTime }) => inkTimes.push(renderTime),
      patchConsole: false,
    });
    // Warm up: the first full read of 10,000 cooldowns and stores, and the stream.
    const ready = performance.now() + 15_000;
    while (
      (feed.getSnapshot().connection.state !== 'live' || !feed.getSnapshot().data.cooldowns) &&
      performance.now() < ready
    ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    if (feed.getSnapshot().connection.state !== 'live') throw new Error('the feed never went live');
    // The full read the stream's hello asks for (10,000 cooldowns and stores, in pages) is over
    // before the measurement: a steady state, where that read comes once every 30 s.
    await new Promise((r) => setTimeout(r, 5000));
    frameTimes.length = 0;
    inkTimes.length = 0;
    updates = 0;
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const bytes0 = stdout.bytes;
    // BENCH_CPU_PROFILE=<file>: a CPU profile of the measured window alone (not the start-up).
    const profile = process.env.BENCH_CPU_PROFILE ? new Session() : undefined;
    const post = (method: string): Promise<unknown> =>
      new Promise((resolve, reject) => profile!.post(method, (err, res) => (err ? reject(err) : resolve(res))));
    if (profile) {
      profile.connect();
      await post('Profiler.enable');
      await post('Profiler.start');
    }
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    lag.disable();
    if (profile) {
      const { profile: p } = (await post('Profiler.stop')) as { profile: unknown };
      writeFileSync(process.env.BENCH_CPU_PROFILE!, JSON.stringify(p));
      profile.disconnect();
    }
    const cpuPct = ((cpu.user + cpu.system) / 1000 / wall) * 100;
    app.unmount();
    await feed.stop();
    await transport?.close();

    const frame95 = pct(frameTimes, 95);
    console.log(
      `\n## Live at ${LIVE_SIZE.columns}×${LIVE_SIZE.rows}: ${EVENTS_PER_SECOND} changes/s over /events, polls every 2 s, ${SECONDS} s\n`,
    );
    console.log('| measure | value | goal |');
    console.log('|---|---:|---|');
    console.log(
      `| CPU of the TUI process (% of one core) | ${cpuPct.toFixed(1)} | < 10: ${cpuPct < 10 ? 'met' : 'MISSED'} |`,
    );
    console.log(
      `| of which user / system (% of one core) | ${(cpu.user / 10 / wall).toFixed(1)} / ${(cpu.system / 10 / wall).toFixed(1)} | |`,
    );
    console.log(
      `| screen updates / frames drawn per second | ${(updates / (wall / 1000)).toFixed(1)} / ${(inkTimes.length / (wall / 1000)).toFixed(1)} | |`,
    );
    console.log(
      `| update → frame written (React + Ink + the frame cap's wait), p50 / p95 ms | ${ms(pct(frameTimes, 50))} / ${ms(frame95)} | |`,
    );
    console.log(
      `| of which Ink layout + output, p50 / p95 ms | ${ms(pct(inkTimes, 50))} / ${ms(pct(inkTimes, 95))} | |`,
    );
    console.log(`| event-loop delay p99 / max ms | ${ms(lag.percentile(99) / 1e6)} / ${ms(lag.max / 1e6)} | |`);
    console.log(`| terminal output KiB/s | ${((stdout.bytes - bytes0) / 1024 / (wall / 1000)).toFixed(1)} | |`);
  } finally {
    child.kill('SIGKILL');
  }
  process.exit(0);
}

if (process.argv.includes('--fake-master')) await runFakeMaster();
else await main();
