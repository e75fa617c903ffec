/**
 * Readers of the files under `deploy/`: systemd units, their example environment files and the
 * Grafana dashboard, parsed just far enough for the checks in this package.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** `deploy/systemd/`. */
export const SYSTEMD_DIR = join(REPO_ROOT, 'deploy/systemd');
/** The binaries the units run, found in the workspace (turbo builds them before these tests). */
export const EXPORTER_BIN = join(REPO_ROOT, 'apps/exporter/bin/maintd-exporter.js');

/** The services in `deploy/systemd/`, each with its binary's name and example env file. */
export const SERVICES = [
  { unit: 'maintd.service', bin: 'maintd', app: 'apps/master', envFile: 'maintd.env' },
  { unit: 'maintd-exporter.service', bin: 'maintd-exporter', app: 'apps/exporter', envFile: 'maintd-exporter.env' },
] as const;

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}

// ---- systemd units -------------------------------------------------------------------------------

/** A unit file: section → directive → every value it was given, in order. */
export type Unit = ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>;

/** Parses a unit file (no line continuations: the units here use none). */
export function parseUnit(text: string): Unit {
  const unit = new Map<string, Map<string, string[]>>();
  let section: Map<string, string[]> | undefined;
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header) {
      section = new Map();
      unit.set(header[1]!, section);
      continue;
    }
    const eq = line.indexOf('=');
    if (!section || eq <= 0) throw new Error(`line ${i + 1}: not a directive: ${raw}`);
    const key = line.slice(0, eq).trim();
    section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return unit;
}

/** The last value of `section`'s `key` (systemd's rule for single-valued settings), or undefined. */
export function directive(unit: Unit, section: string, key: string): string | undefined {
  return unit.get(section)?.get(key)?.at(-1);
}

/** A systemd time span in seconds: `45`, `45s`, `1min 30s`, `2m`. */
export function timeSpanSecs(value: string): number {
  const units: Record<string, number> = { '': 1, s: 1, sec: 1, m: 60, min: 60, h: 3600, hr: 3600 };
  let total = 0;
  const rest = value.replace(/(\d+)\s*([a-z]*)/g, (_m, n: string, u: string) => {
    const factor = units[u];
    if (factor === undefined) throw new Error(`unsupported time unit in "${value}"`);
    total += Number(n) * factor;
    return '';
  });
  if (rest.trim() !== '') throw new Error(`not a time span: "${value}"`);
  return total;
}

// ---- example environment files -------------------------------------------------------------------

/** One commented-out setting of an example env file. */
export interface EnvEntry {
  readonly name: string;
  /** The value after `=` (the default, or empty when the setting has none). */
  readonly value: string;
  /** The comment lines above it, `# ` stripped and joined with single spaces. */
  readonly comment: string;
  /** 1-based line number of the assignment. */
  readonly line: number;
}

/**
 * The settings of an example env file: every `#NAME=value` line, with the comment block right
 * above it. Also returns the lines that are neither blank nor comments (there should be none).
 */
export function parseEnvFile(text: string): { readonly entries: EnvEntry[]; readonly active: string[] } {
  const entries: EnvEntry[] = [];
  const active: string[] = [];
  let comment: string[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trimEnd();
    const setting = /^#([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (setting) {
      entries.push({ name: setting[1]!, value: setting[2]!, comment: comment.join(' '), line: i + 1 });
      comment = [];
    } else if (line.startsWith('#')) {
      comment.push(line.replace(/^#\s?/, '').trim());
    } else if (line === '') {
      comment = [];
    } else {
      active.push(line);
    }
  }
  return { entries, active };
}

/** The env map a file gives when every commented-out setting is uncommented as it stands. */
export function uncommented(entries: readonly EnvEntry[]): Record<string, string> {
  return Object.fromEntries(entries.map((e) => [e.name, e.value]));
}

/** Whitespace collapsed, so wrapped comments compare equal to one-line descriptions. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

// ---- processes -----------------------------------------------------------------------------------

/** Runs `cmd args` to completion; resolves with the exit code and both outputs, never rejects. */
export function run(
  cmd: string,
  args: readonly string[],
  options: { readonly cwd?: string; readonly env?: Record<string, string> } = {},
): Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      [...args],
      { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr: stderr || (err && typeof err.code !== 'number' ? err.message : '') });
      },
    );
  });
}
