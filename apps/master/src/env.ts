/**
 * The master's configuration edge (docs/ARCHITECTURE.md §3.1): the only module that reads `process.env`.
 * Parsing lives in the settings schema (`settings.ts`); this hands it the process's input.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type LoadResult, loadConfig } from './settings.js';

/** Parses this process's argv and environment into what startup should do. */
export function loadProcessConfig(argv: readonly string[]): LoadResult {
  return loadConfig({
    argv,
    env: process.env,
    hostname: hostname(),
    pid: process.pid,
    random: () => randomBytes(3).toString('hex'),
  });
}
