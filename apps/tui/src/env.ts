/**
 * The dashboard's configuration edge: the only module of `maintd-top` that reads `process.env`
 * (MAINTD_URL, MAINTD_TOKEN, NO_COLOR); everything below `main.ts` gets what it parsed.
 */
import process from 'node:process';
import { type CliResult, parseCli } from './cli.js';
import { colorEnabled } from './theme.js';
import { VERSION } from './version.js';

/** Parses this process's argv and environment into what the run should do. */
export function loadCli(argv: readonly string[]): CliResult {
  return parseCli(argv, process.env, VERSION);
}

/** Whether the environment lets the dashboard draw in colour (NO_COLOR unset). */
export function colorFromEnv(): boolean {
  return colorEnabled(process.env);
}
