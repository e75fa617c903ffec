/**
 * Prints a text capture of every maintd-top view, for the README: the real `maintd` master on
 * its embedded store, the stub worker of `test/worker-stub.ts` (with one broken store) plus one
 * worker endpoint that refuses connections, and the built `maintd-top` in a tmux pane.
 *
 *   pnpm build && tsx scripts/capture-views.ts [columns] [rows]
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { demoStores, startWorkerStub } from '../test/worker-stub.js';

const columns = Number(process.argv[2] ?? 100);
const rows = Number(process.argv[3] ?? 24);
const SOCKET = `maintd-top-capture-${process.pid}`;
const tmux = (...args: string[]): string =>
  execFileSync('tmux', ['-L', SOCKET, '-f', '/dev/null', ...args], { encoding: 'utf8' });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const worker = await startWorkerStub(demoStores());
const refused = `http://127.0.0.1:${await freePort()}`;
const port = await freePort();
const env = { ...process.env };
delete env.ETCD_ENDPOINTS;
const master: ChildProcess = spawn(
  process.execPath,
  [
    fileURLToPath(new URL('../../master/bin/maintd.js', import.meta.url)),
    '--master-host=127.0.0.1',
    `--master-port=${port}`,
    `--worker-endpoints=${worker.url},${refused}`,
    '--stats-scan-interval-secs=1',
    '--merge-wal-interval-secs=2',
    '--compaction-interval-secs=3',
    '--task-cooldown-after-failures=2',
    '--log-level=silent',
  ],
  { env, stdio: 'ignore' },
);
try {
  await sleep(7000);
  const command = [
    'env',
    '-i',
    `PATH=${process.env.PATH ?? ''}`,
    'TERM=xterm-256color',
    'LANG=C.UTF-8',
    process.execPath,
    fileURLToPath(new URL('../bin/maintd-top.js', import.meta.url)),
    '--url',
    `http://127.0.0.1:${port}`,
  ]
    .map((a) => `'${a}'`)
    .join(' ');
  tmux('-u', 'new-session', '-d', '-s', 'top', '-x', String(columns), '-y', String(rows), command);
  const shot = async (title: string, ...keys: string[]): Promise<void> => {
    if (keys.length > 0) tmux('send-keys', '-t', 'top', ...keys);
    await sleep(1200);
    const text = tmux('capture-pane', '-p', '-t', 'top').replace(/\s+$/, '');
    process.stdout.write(`### ${title}\n\n\`\`\`text\n${text}\n\`\`\`\n\n`);
  };
  // The dashboard's first full read (and Node's start) on a busy machine.
  await sleep(4000);
  await shot('1 Overview');
  await shot('2 Tasks', '2');
  await shot('3 Cooldowns', '3');
  await shot('Detail pane (Enter on a cooldown)', 'Enter');
  // Escape alone: sent with the next key it would read as Alt+key.
  tmux('send-keys', '-t', 'top', 'Escape');
  await sleep(300);
  await shot('Confirm dialog (c)', 'c');
  await shot('Reason prompt (p)', 'n', 'p');
  tmux('send-keys', '-t', 'top', '-l', 'fragment lost, restore planned Monday');
  await shot('Park confirm dialog', 'Enter');
  await shot('3 Cooldowns, parked', 'y');
  await shot('Detail pane: the timeline, with the park (Enter)', 'Enter');
  tmux('send-keys', '-t', 'top', 'Escape');
  await sleep(300);
  tmux('send-keys', '-t', 'top', '/');
  tmux('send-keys', '-t', 'top', '-l', 'not found');
  await shot('3 Cooldowns, searched (/)', 'Enter');
  await shot('Bulk park: the reason (P)', 'P');
  tmux('send-keys', '-t', 'top', '-l', 'restore planned Monday');
  await shot('Bulk park: the master’s count', 'Enter');
  await shot('3 Cooldowns, bulk-parked', 'y');
  await shot('1 Overview, with the park', '1');
  await shot('4 Stores', '4');
  await shot('5 Workers', '5');
  await shot('Help (?)', '?');
  tmux('send-keys', '-t', 'top', 'q');
} finally {
  try {
    tmux('kill-server');
  } catch {
    // Already gone.
  }
  master.kill('SIGKILL');
  await worker.close();
}
