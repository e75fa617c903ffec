import { execFileSync } from 'node:child_process';

/**
 * `maintd-top` in a real terminal (tmux), read-only, as an operator would watch the fleet: its
 * screen is its data feed. One tmux server per test process.
 */
export class Dashboard {
  readonly #socket: string;

  private constructor(name: string) {
    this.#socket = `maintd-upgrade-${process.pid}-${name}`;
  }

  #tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.#socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
  }

  /** Starts `node <bin> --url <url>` in a 200×40 terminal of a tmux server of its own, named `name`. */
  static start(bin: string, url: string, name: string): Dashboard {
    try {
      execFileSync('tmux', ['-V']);
    } catch {
      throw new Error('tmux is not installed (apt-get install tmux): maintd-top needs a terminal');
    }
    const d = new Dashboard(name);
    const env = [
      `PATH=${process.env.PATH ?? ''}`,
      `HOME=${process.env.HOME ?? '/tmp'}`,
      'TERM=xterm-256color',
      'LANG=C.UTF-8',
    ];
    const command = ['env', '-i', ...env, process.execPath, bin, '--url', url, '--readonly', '--refresh', '500ms']
      .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    d.#tmux('-u', 'new-session', '-d', '-s', 'top', '-x', '200', '-y', '40', command);
    return d;
  }

  /** The visible screen. */
  screen(): string {
    return this.#tmux('capture-pane', '-p', '-t', 'top');
  }

  /** Polls the screen until `ok` holds; fails with the last screen. */
  async waitFor(what: string, ok: (screen: string) => boolean, ms = 20_000): Promise<string> {
    const deadline = performance.now() + ms;
    let last = '';
    while (performance.now() < deadline) {
      last = this.screen();
      if (ok(last)) return last;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`maintd-top never showed ${what}; last screen:\n${last}`);
  }

  close(): void {
    try {
      this.#tmux('kill-server');
    } catch {
      // Already gone.
    }
  }
}

/** A screen that shows the fleet live, with no error in its header. */
export function cleanLive(screen: string, kinds: readonly string[]): boolean {
  return (
    screen.includes('● live') &&
    !screen.includes('last read failed') &&
    !/○ disconnected|◐ polling/.test(screen) &&
    kinds.every((k) => screen.includes(k))
  );
}
