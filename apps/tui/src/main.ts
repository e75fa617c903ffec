import process from 'node:process';
import { cryptoRandom, systemClock } from '@maintd/core';
import { stdoutIsTty } from '@maintd/settings';
import { MaintdClient } from './api/client.js';
import { loadTlsFiles } from './api/tls-files.js';
import { MasterTransport } from './api/transport.js';
import { FleetFeed } from './data/feed.js';
import { colorFromEnv, loadCli } from './env.js';
import { renderDashboard } from './render.js';

// The alternate screen: the dashboard takes the whole terminal and the shell's scrollback comes
// back untouched on exit, as with htop or k9s.
const ENTER_ALT_SCREEN = '\u001b[?1049h\u001b[H';
const LEAVE_ALT_SCREEN = '\u001b[?1049l';

/** The `maintd-top` entry point. */
export async function main(argv: readonly string[]): Promise<void> {
  const cli = loadCli(argv);
  if (cli.action === 'help' || cli.action === 'version') {
    process.stdout.write(cli.text);
    return;
  }
  if (cli.action === 'error') {
    process.stderr.write(`maintd-top: ${cli.message}\nRun 'maintd-top --help' for the options.\n`);
    process.exitCode = 2;
    return;
  }
  const o = cli.options;
  let transport: MasterTransport;
  try {
    // Before the screen is taken: a bad file is a usage error, said once, not a failure per request.
    transport = new MasterTransport(await loadTlsFiles(o.tls, systemClock.now()));
  } catch (err) {
    process.stderr.write(`maintd-top: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  if (!stdoutIsTty() || !process.stdin.isTTY) {
    process.stderr.write('maintd-top: needs an interactive terminal (stdin and stdout must be a TTY)\n');
    process.exitCode = 2;
    await transport.close();
    return;
  }
  // Every request (lists, actions, the event stream) goes through the one transport.
  const client = new MaintdClient({ url: o.url, token: o.token, timeoutMs: o.timeoutMs, fetch: transport.fetch });
  const feed = new FleetFeed({
    client,
    token: o.token,
    refreshMs: o.refreshMs,
    clock: systemClock,
    random: cryptoRandom,
    fetch: transport.fetch,
  });
  feed.start();

  process.stdout.write(ENTER_ALT_SCREEN);
  let restored = false;
  const restore = (): void => {
    if (restored) return;
    restored = true;
    process.stdout.write(LEAVE_ALT_SCREEN);
  };
  process.once('exit', restore);
  const instance = renderDashboard({
    source: feed,
    api: client,
    clock: systemClock,
    url: o.url,
    readonly: o.readonly,
    guardPercent: o.guardPercent,
    theme: { color: colorFromEnv() },
  });
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) process.once(signal, () => instance.unmount());
  try {
    await instance.waitUntilExit();
  } finally {
    await feed.stop();
    restore();
  }
  // Keep-alive sockets of the pool would hold the process open for a few seconds.
  process.exit(process.exitCode ?? 0);
}
