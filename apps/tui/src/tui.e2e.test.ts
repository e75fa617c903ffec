/**
 * End to end in a real terminal: the real `maintd` master (embedded store) against a stub worker
 * with one broken store, and the built `maintd-top` running in tmux, driven with send-keys and
 * read with capture-pane. Needs `pnpm build` (of this package and the master) and tmux.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WorkerStub, demoStores, startWorkerStub } from '../test/worker-stub.js';

const TUI_BIN = fileURLToPath(new URL('../bin/maintd-top.js', import.meta.url));
const TUI_DIST = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const MASTER_BIN = fileURLToPath(new URL('../../master/bin/maintd.js', import.meta.url));
const MASTER_DIST = fileURLToPath(new URL('../../master/dist/main.js', import.meta.url));
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

describe('maintd-top in a real terminal against a real master', () => {
  let worker: WorkerStub;
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
        `--worker-endpoints=${worker.url}`,
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

  beforeAll(async () => {
    for (const [file, what] of [
      [TUI_DIST, 'apps/tui'],
      [MASTER_DIST, 'apps/master'],
    ] as const) {
      if (!existsSync(file)) throw new Error(`${what} is not built: run \`pnpm build\` first`);
    }
    try {
      execFileSync('tmux', ['-V']);
    } catch {
      throw new Error('tmux is not installed (apt-get install tmux)');
    }
    worker = await startWorkerStub(demoStores());
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    await startMaster();
    // A clean environment: no CI variables (Ink draws nothing in CI mode), UTF-8, a known TERM.
    const env = [
      `PATH=${process.env.PATH ?? ''}`,
      `HOME=${process.env.HOME ?? '/tmp'}`,
      'TERM=xterm-256color',
      'LANG=C.UTF-8',
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
    await killMaster();
    await worker?.close();
  });

  it('shows the broken store cooling with its last error; c then y resets it; it rides out a master restart', async () => {
    // The broken store fails twice within a few seconds and cools down.
    await waitForScreen('the live header', (s) => s.includes('● live'));
    keys('3');
    let s = await waitForScreen('the broken store cooling', (x) => /merge_wal broken-store\s+2 cooling/.test(x));
    expect(s).toContain('Not found: /srv/stores/broken-store/data/');
    // Redrawn in place: one header, one tab bar, no stale or doubled lines.
    expect(s.split('\n').filter((l) => l.startsWith('maintd-top '))).toHaveLength(1);
    expect(s.split('\n').filter((l) => l.includes('1 Overview'))).toHaveLength(1);

    // The detail pane has the whole error and the target's history.
    keys('Enter');
    s = await waitForScreen('the detail pane', (x) => x.includes('History of this target') && x.includes('.lance'));
    expect(s).toMatch(/last error\s+merged 0 generations across 0\/1 workers/);
    keys('Escape');
    await waitForScreen('the list again', (x) => x.includes('LAST ERROR'));

    // Reset it from the dashboard: the confirm dialog, then the master's own account of it.
    keys('c');
    await waitForScreen('the confirm dialog', (x) => x.includes('Reset 1 cooldown?'));
    keys('y');
    await waitForScreen('the reset notice', (x) => x.includes('reset the cooldown of merge_wal broken-store'));
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/master_cooldown_cleared_total\{kind="merge_wal",reason="operator"\} 1/);

    // The master dies without a word and comes back (empty: its embedded store is gone).
    await killMaster();
    await waitForScreen('the disconnected state', (x) => x.includes('○ disconnected'));
    await startMaster();
    const { masters } = (await (await fetch(`${url}/api/v1/masters`)).json()) as { masters: { id: string }[] };
    const reborn = masters[0]!.id;
    keys('1');
    await waitForScreen('the new master, live', (x) => x.includes('● live') && x.includes(reborn));
    keys('3');
    s = await waitForScreen('its cooldowns', (x) => /merge_wal broken-store\s+2 cooling/.test(x));
    expect(s.split('\n').filter((l) => l.startsWith('maintd-top '))).toHaveLength(1);
  }, 60_000);
});
