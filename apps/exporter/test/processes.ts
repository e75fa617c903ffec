import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '@maintd/core/testing';

/** The repository root, for deploy/ files. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The exporter's binary (runs the built dist). */
export const EXPORTER_BIN = join(dirname(fileURLToPath(import.meta.url)), '../bin/maintd-exporter.js');
/**
 * The master's binary, found in the workspace (apps never depend on each other; turbo builds
 * the master before this package's tests).
 */
export const MASTER_BIN = join(REPO_ROOT, 'apps/master/bin/maintd.js');

/** A child process started by a test; `stop()` sends SIGTERM and waits (SIGKILL after 5 s). */
export interface Child {
  readonly proc: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

const children = new Set<Child>();

/** Starts `cmd args` with `env` on top of a minimal environment (PATH only). */
export function start(cmd: string, args: readonly string[], env: Record<string, string> = {}): Child {
  const proc = spawn(cmd, [...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  proc.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const child: Child = {
    proc,
    output: () => out,
    exited,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const killer = setTimeout(() => proc.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(killer);
      }
      children.delete(child);
      return exited;
    },
  };
  children.add(child);
  return child;
}

/** Stops every child still running (for afterAll/afterEach). */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => c.stop()));
}

/** Runs `cmd args` to completion, with `input` on stdin; returns the exit code and all output. */
export async function runOnce(
  cmd: string,
  args: readonly string[],
  options: { readonly input?: string; readonly env?: Record<string, string>; readonly cwd?: string } = {},
): Promise<{ code: number | null; out: string }> {
  const proc = spawn(cmd, [...args], {
    env: { PATH: process.env.PATH ?? '', ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  proc.stdin.end(options.input ?? '');
  // 'close', not 'exit': at 'exit' the last output can still be in the pipes, unread.
  const code = await new Promise<number | null>((resolve) => proc.once('close', resolve));
  return { code, out };
}

/** Waits until `url` answers 2xx, failing early with the child's output if it exits. */
export async function waitHttp(url: string, child: Child, timeoutMs = 20_000): Promise<void> {
  await eventually(async () => {
    if (child.proc.exitCode !== null)
      throw new Error(`process exited early (${child.proc.exitCode}):\n${child.output()}`);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
  }, timeoutMs);
}
