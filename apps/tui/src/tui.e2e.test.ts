/**
 * End to end in a real terminal: the real `maintd` master (embedded store) against the project's
 * simulated workers (`maintd-sim workers`: real HTTP workers, one broken store), and `maintd-top`
 * as npm installs it (packed and installed once per run by the e2e project's global setup,
 * test/installed-setup.ts) running in tmux, driven with send-keys and read with capture-pane.
 * Needs `pnpm build` (of this package, core, the master and the sim), npm and tmux.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const TUI_BIN = inject('installedTuiBin');
const MASTER_BIN = fileURLToPath(new URL('../../master/bin/maintd.js', import.meta.url));
const MASTER_DIST = fileURLToPath(new URL('../../master/dist/main.js', import.meta.url));
const SIM_BIN = fileURLToPath(new URL('../../sim/bin/maintd-sim.js', import.meta.url));
const SIM_DIST = fileURLToPath(new URL('../../sim/dist/main.js', import.meta.url));
const SIM_WORKERS = 2;
const SIM_SEED = 1;
const TOKEN = 'e2e-token';
const SOCKET = `maintd-top-e2e-${process.pid}`;

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, '-f', '/dev/null', ...args], { encoding: 'utf8' });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/**
 * A time zone where it is about midday now. The dashboard shows when a window ends as `HH:MM:SS`
 * on the same local day and as `MM-DD HH:MM` on another, so a run in the minutes before midnight
 * would see dates where this test reads times (a 10-minute window from 23:51 ends tomorrow).
 */
function middayZone(now = new Date()): string {
  const offset = 12 - now.getUTCHours();
  // The Etc zones count the other way: Etc/GMT-3 is three hours ahead of UTC.
  return offset === 0 ? 'Etc/UTC' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

/** The visible screen of the dashboard. */
function screen(): string {
  return tmux('capture-pane', '-p', '-t', 'top');
}

/** Polls the screen until `ok` holds; fails with the last screen. */
async function waitForScreen(what: string, ok: (s: string) => boolean, ms = 15_000): Promise<string> {
  const deadline = performance.now() + ms;
  let last = '';
  while (performance.now() < deadline) {
    last = screen();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`screen never showed ${what}; last screen:\n${last}`);
}

function keys(...k: string[]): void {
  tmux('send-keys', '-t', 'top', ...k);
}

/** A running `maintd-sim workers`. */
interface Sim {
  readonly child: ChildProcess;
  readonly endpoints: string[];
  readonly broken: string[];
}

/**
 * Starts `maintd-sim workers` and reads where its workers listen and which stores are broken
 * from its stdout. Its output keeps being read afterwards, so a full pipe never blocks it.
 */
async function startSim(): Promise<Sim> {
  const child = spawn(
    process.execPath,
    [
      SIM_BIN,
      'workers',
      `--workers=${SIM_WORKERS}`,
      '--stores=6',
      '--broken=1',
      `--seed=${SIM_SEED}`,
      '--broken-latency-ms=200',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const lines = createInterface({ input: child.stdout });
  try {
    return await new Promise<Sim>((resolve, reject) => {
      let broken: string[] | undefined;
      const timer = setTimeout(() => reject(new Error(`maintd-sim did not start in 10 s:\n${stderr}`)), 10_000);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`maintd-sim exited (${signal ?? code}) before listening:\n${stderr}`));
      });
      lines.on('line', (line) => {
        if (line.startsWith('{')) {
          const msg = JSON.parse(line) as { msg?: string; broken?: string[] };
          if (msg.msg === 'simulated workers listening') broken = msg.broken;
        } else if (line.startsWith('WORKER_ENDPOINTS=')) {
          clearTimeout(timer);
          const endpoints = line.slice('WORKER_ENDPOINTS='.length).split(',');
          if (!broken) reject(new Error(`maintd-sim named no broken stores before ${line}`));
          else resolve({ child, endpoints, broken });
        }
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

/** Stops a child process: SIGTERM, then SIGKILL if it is still there after `graceMs`. */
async function stop(child: ChildProcess | undefined, graceMs = 3000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

describe('maintd-top in a real terminal against a real master', () => {
  let sim: Sim | undefined;
  let master: ChildProcess | undefined;
  let port: number;
  let url: string;

  const startMaster = async (): Promise<void> => {
    const env = { ...process.env };
    delete env.ETCD_ENDPOINTS; // the embedded store: no etcd
    master = spawn(
      process.execPath,
      [
        MASTER_BIN,
        '--master-host=127.0.0.1',
        `--master-port=${port}`,
        `--master-api-token=${TOKEN}`,
        `--worker-endpoints=${sim!.endpoints.join(',')}`,
        '--stats-scan-interval-secs=1',
        '--merge-wal-interval-secs=1',
        '--compaction-interval-secs=0',
        '--task-cooldown-after-failures=2',
        '--log-level=warn',
      ],
      { env, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const deadline = performance.now() + 10_000;
    while (performance.now() < deadline) {
      const ok = await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the master did not become ready');
  };

  const killMaster = async (): Promise<void> => {
    const m = master;
    master = undefined;
    if (!m || m.exitCode !== null) return;
    const exited = new Promise((r) => m.once('exit', r));
    m.kill('SIGKILL');
    await exited;
  };

  /** The last resort, should the test process exit before afterAll: no child outlives it. */
  const killChildren = (): void => {
    master?.kill('SIGKILL');
    sim?.child.kill('SIGKILL');
    try {
      tmux('kill-server');
    } catch {
      // No server.
    }
  };

  beforeAll(async () => {
    for (const [file, what] of [
      [MASTER_DIST, 'apps/master'],
      [SIM_DIST, 'apps/sim'],
    ] as const) {
      if (!existsSync(file)) throw new Error(`${what} is not built: run \`pnpm build\` first`);
    }
    try {
      execFileSync('tmux', ['-V']);
    } catch {
      throw new Error('tmux is not installed (apt-get install tmux)');
    }
    process.once('exit', killChildren);
    sim = await startSim();
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    await startMaster();
    // A clean environment: no CI variables (Ink draws nothing in CI mode), UTF-8, a known TERM, and
    // a zone where no cooldown window of this test ends on another day.
    const env = [
      `PATH=${process.env.PATH ?? ''}`,
      `HOME=${process.env.HOME ?? '/tmp'}`,
      'TERM=xterm-256color',
      'LANG=C.UTF-8',
      `TZ=${middayZone()}`,
      `MAINTD_URL=${url}`,
      `MAINTD_TOKEN=${TOKEN}`,
    ];
    const command = ['env', '-i', ...env, process.execPath, TUI_BIN, '--refresh', '500ms']
      .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    tmux('-u', 'new-session', '-d', '-s', 'top', '-x', '200', '-y', '40', command);
  }, 30_000);

  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // Already gone.
    }
    try {
      await killMaster();
    } finally {
      await stop(sim?.child);
      process.off('exit', killChildren);
    }
  });

  it('shows the broken store cooling with its cause first and, on Enter, its timeline (failures, who reset and parked it); c then y resets it; p parks it with a reason and u releases it; it rides out a master restart; / then P parks every match after confirming the master’s count', async () => {
    const [broken] = sim!.broken;
    expect(sim!.broken).toHaveLength(1);
    // The count against the master's threshold (2, read from its policy endpoint).
    const cooling = new RegExp(`merge_wal ${broken}\\s+cooling\\s+2/2`);
    // Workers that own no shard of the broken store answer its merge with 404 (nothing to merge,
    // an answer); its owners fail with the missing fragment.
    let owners = 0;
    for (const endpoint of sim!.endpoints) {
      const r = (await (await fetch(`${endpoint}/api/v1/internal/stores`)).json()) as { stores: { name: string }[] };
      if (r.stores.some((x) => x.name === broken)) owners++;
    }
    expect(owners).toBeGreaterThan(0);

    // The broken store fails twice within a few seconds and cools down.
    await waitForScreen('the live header', (s) => s.includes('● live'));
    keys('3');
    let s = await waitForScreen('the broken store cooling', (x) => cooling.test(x));
    // The cause column leads with the failing worker's own error.
    const row = s.split('\n').find((l) => cooling.test(l))!;
    expect(row).toMatch(new RegExp(`http://127\\.0\\.0\\.1:\\d+: HTTP 500: Not found: /data/${broken}\\.lance/data/`));
    expect(s).toMatch(/KIND\s+TARGET\s+STATE\s+FAILS\s+LEFT\s+UNTIL\s+NEXT\s+LAST FAIL CAUSE/);
    // Redrawn in place: one header, one tab bar, no stale or doubled lines.
    expect(s.split('\n').filter((l) => l.startsWith('maintd-top '))).toHaveLength(1);
    expect(s.split('\n').filter((l) => l.includes('1 Overview'))).toHaveLength(1);

    // The detail pane has the whole error, cause first, and the pair's timeline: its failures,
    // each with its count, class and error, from one request to the master's detail route.
    keys('Enter');
    s = await waitForScreen(
      'the detail pane with the timeline',
      // The pane shows the stream's events of the pair at once and the detail's answer when it
      // arrives: wait for the answer's oldest failure too.
      (x) =>
        /Timeline \(\d+, newest first\)/.test(x) &&
        /failure\s+#2 · target · http:\/\//.test(x) &&
        /failure\s+#1 · target · http:\/\/127\.0\.0\.1:\d+: HTTP 500: Not found/.test(x),
    );
    expect(s).toMatch(/window_opened\s+\S+ window · until \d\d:\d\d:\d\d · after 2 failures/);
    expect(s).not.toContain('History of this target');
    expect(s).toMatch(
      new RegExp(`cause\\s+http://127\\.0\\.0\\.1:\\d+: HTTP 500: Not found: /data/${broken}\\.lance/data/`),
    );
    expect(s.replace(/[\s│]+/g, ' ')).toContain(
      `(merged 0 generations across ${SIM_WORKERS - owners}/${SIM_WORKERS} workers` +
        (owners > 1 ? `; ${owners - 1} more error${owners > 2 ? 's' : ''})` : ')'),
    );
    expect(s).toMatch(/next window\s+\S+ if it fails again/);
    keys('Escape');
    await waitForScreen('the list again', (x) => x.includes('CAUSE'));

    // Reset it from the dashboard: the confirm dialog, then the master's own account of it.
    keys('c');
    await waitForScreen('the confirm dialog', (x) => x.includes('Reset 1 cooldown?'));
    keys('y');
    await waitForScreen('the reset notice', (x) => x.includes(`reset the cooldown of merge_wal ${broken}`));
    let metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/master_cooldown_cleared_total\{kind="merge_wal",reason="operator"\} 1/);

    // It fails again and cools again (a new window: another end time); now park it, with a reason.
    const firstUntil = /\b\d\d:\d\d:\d\d\b/.exec(row.slice(row.indexOf('cooling')))![0];
    await waitForScreen('the broken store cooling again', (x) =>
      x.split('\n').some((l) => cooling.test(l) && !l.includes(firstUntil)),
    );
    keys('p');
    await waitForScreen('the reason prompt', (x) => x.includes(`Park merge_wal ${broken}?`) && x.includes('Why?'));
    keys('-l', 'fragment lost, restore planned Monday');
    keys('Enter');
    await waitForScreen(
      'the confirm dialog with the reason',
      (x) => x.includes('Reason: fragment lost, restore planned Monday') && x.includes('y/Enter confirm'),
    );
    keys('y');
    s = await waitForScreen('the parked row', (x) =>
      new RegExp(`merge_wal ${broken}\\s+parked .*fragment lost, restore planned Monday \\(parked by default@`).test(x),
    );
    expect(s).toContain(`parked merge_wal ${broken}: fragment lost, restore planned Monday`);
    // Its timeline says who reset it and who parked it (MASTER_API_TOKEN is the token `default`), and
    // why, above its failures.
    keys('Enter');
    s = await waitForScreen('the timeline with the park', (x) =>
      /parked\s+by default@127\.0\.0\.1 · fragment lost, restore planned Monday · until released/.test(x),
    );
    expect(s).toMatch(/reset\s+by default@127\.0\.0\.1 · 2 failures/);
    // Newest first: the park, the failures since the reset (it failed twice again), the reset.
    const timelineText = s.slice(s.indexOf('Timeline'));
    const at = (re: RegExp): number => timelineText.search(re);
    expect(at(/parked\s+by/)).toBeLessThan(at(/failure\s+#2/));
    expect(at(/failure\s+#2/)).toBeLessThan(at(/failure\s+#1/));
    expect(at(/failure\s+#1/)).toBeLessThan(at(/reset\s+by/));
    keys('Escape');
    await waitForScreen('the list again', (x) => x.includes('CAUSE'));
    const parked = (await (await fetch(`${url}/api/v1/scheduler/cooldowns?state=parked&limit=10`)).json()) as {
      target: string;
      parked?: { reason: string; by: string };
    }[];
    expect(parked.map((c) => [c.target, c.parked?.reason, c.parked?.by.startsWith('default@')])).toEqual([
      [broken, 'fragment lost, restore planned Monday', true],
    ]);
    metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/master_task_parked\{kind="merge_wal"\} 1/);
    // The park came back over the event stream into the activity log, as its audit entry: who,
    // from where, marked as this dashboard's own action, and why.
    keys('1');
    await waitForScreen('the park in the activity log', (x) =>
      new RegExp(`default@127\\.0\\.0\\.1 \\(you\\) parked merge_wal on ${broken}: fragment lost`).test(x),
    );
    expect(screen()).toMatch(new RegExp(`Parked 1\\n\\s+merge_wal ${broken}\\s+fragment lost`));

    // Release it: confirmed, then gone from the parks.
    keys('3', 'u');
    await waitForScreen('the release dialog', (x) => x.includes(`Release merge_wal ${broken}?`));
    keys('y');
    await waitForScreen('the release notice', (x) => x.includes(`released merge_wal ${broken}`));
    const after = (await (await fetch(`${url}/api/v1/scheduler/cooldowns?state=parked&limit=10`)).json()) as unknown[];
    expect(after).toEqual([]);
    keys('1');
    await waitForScreen('the release in the activity log', (x) =>
      x.includes(`default@127.0.0.1 (you) released merge_wal on ${broken}`),
    );
    keys('3');

    // The master dies without a word and comes back (empty: its embedded store is gone).
    await killMaster();
    await waitForScreen('the disconnected state', (x) => x.includes('○ disconnected'));
    await startMaster();
    const { masters } = (await (await fetch(`${url}/api/v1/masters`)).json()) as { masters: { id: string }[] };
    const reborn = masters[0]!.id;
    keys('1');
    await waitForScreen('the new master, live', (x) => x.includes('● live') && x.includes(reborn));
    keys('3');
    s = await waitForScreen('its cooldowns', (x) => cooling.test(x));
    expect(s.split('\n').filter((l) => l.startsWith('maintd-top '))).toHaveLength(1);

    // Run now on a store: the dialog offers the kinds the master registers it runs, in its
    // registry order, merge_wal picked; j picks the next, y enqueues it.
    keys('4');
    await waitForScreen('the stores', (x) => x.includes('COOLING') && !x.includes('no stores'));
    keys('r');
    s = await waitForScreen('the kind dialog', (x) => x.includes('Kind:') && x.includes('j/k kind'));
    expect(s.replace(/[│\s]+/g, ' ')).toContain('Kind: › merge_wal compact index_id Manual runs');
    keys('j');
    s = await waitForScreen('compact picked', (x) => /Run compact now on \S+\?/.test(x));
    const target = /Run compact now on (\S+)\?/.exec(s)![1]!;
    keys('y');
    await waitForScreen('the enqueue notice', (x) => x.includes(`enqueued compact on ${target}`));
    const runs = (await (
      await fetch(`${url}/api/v1/tasks?kind=compact&target=${encodeURIComponent(target)}&limit=10`)
    ).json()) as { tasks: { source: string }[] };
    expect(runs.tasks.map((t) => t.source)).toContain('manual');

    // A bulk park over a search: the master's dry run counts the matches, the dialog confirms
    // that count, the same filter parks them, and the rows show parked.
    keys('3', '/');
    keys('-l', 'not found');
    keys('Enter');
    await waitForScreen('the search', (x) => x.includes('/not found') && cooling.test(x));
    keys('P');
    await waitForScreen('the bulk reason prompt', (x) => x.includes("Park every store matching 'not found'?"));
    keys('-l', 'bulk: fragments lost');
    keys('Enter');
    s = await waitForScreen('the bulk confirm', (x) => /Park \d+ stores? matching 'not found'\?/.test(x));
    const count = Number(/Park (\d+) stores? matching/.exec(s)![1]);
    // The sweeps go on meanwhile: a store may start matching between the dry run and this read,
    // or the real action, never stop matching (a broken store does not succeed).
    const matches = (await (
      await fetch(`${url}/api/v1/scheduler/cooldowns?limit=200&state=any&q=not%20found`)
    ).json()) as unknown[];
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(matches.length);
    expect(s).toContain(`merge_wal ${broken}`);
    keys('y');
    s = await waitForScreen('the bulk notice', (x) => /parked \d+ matching 'not found'/.test(x));
    const done = Number(/parked (\d+) matching 'not found'/.exec(s)![1]);
    expect(done).toBeGreaterThanOrEqual(count);
    await waitForScreen('the rows parked', (x) =>
      new RegExp(`merge_wal ${broken}\\s+parked .*bulk: fragments lost \\(parked by default@`).test(x),
    );
    const bulkParked = (await (await fetch(`${url}/api/v1/scheduler/cooldowns?state=parked&limit=200`)).json()) as {
      target: string;
      parked?: { reason: string };
    }[];
    expect(bulkParked).toHaveLength(done);
    expect(bulkParked.every((c) => c.parked?.reason === 'bulk: fragments lost')).toBe(true);
  }, 120_000);
});
