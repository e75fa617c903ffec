import process from 'node:process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from './main.js';

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

/** Runs `main` with these arguments; what it wrote to stderr, and its exit code. */
async function start(argv: string[]): Promise<{ stderr: string; exitCode: typeof process.exitCode }> {
  let stderr = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  await main(argv);
  // Nothing was drawn: the screen was never taken.
  expect(stdout).not.toHaveBeenCalled();
  return { stderr, exitCode: process.exitCode };
}

describe('main', () => {
  it('stops with exit 2, naming the option and the file, when a TLS file is bad: before the screen is taken', async () => {
    const r = await start(['--url=https://127.0.0.1:1', '--ca=/nonexistent/ca.pem']);
    expect(r).toEqual({ stderr: 'maintd-top: --ca: /nonexistent/ca.pem cannot be read (no such file)\n', exitCode: 2 });
  });

  it('stops with exit 2 on a client certificate without its key', async () => {
    const r = await start(['--url=https://127.0.0.1:1', '--cert=/c.pem']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('--cert (MAINTD_CERT) is set without --key (MAINTD_KEY)');
  });
});
