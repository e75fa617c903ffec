import { parseArgs } from 'node:util';
import { HELP_ENTRY, VERSION_ENTRY, formatHelp, versionText } from '@maintd/settings';

/** Settings of one `maintd-top` run. */
export interface CliOptions {
  readonly url: string;
  readonly token: string | undefined;
  readonly readonly: boolean;
  readonly refreshMs: number;
  readonly timeoutMs: number;
  /** Overrides the guard percentage the master reports (undefined: the master's). */
  readonly guardPercent: number | undefined;
}

/** What the command line asks for. */
export type CliResult =
  | { readonly action: 'run'; readonly options: CliOptions }
  | { readonly action: 'help'; readonly text: string }
  | { readonly action: 'version'; readonly text: string }
  | { readonly action: 'error'; readonly message: string };

/** The default master URL (`maintd`'s default port on this host). */
export const DEFAULT_URL = 'http://127.0.0.1:8090';

/** `--help` text, in the layout every maintd binary shares. */
export const USAGE = formatHelp({
  program: 'maintd-top',
  usage: ['[--url=<url>] [--token=<token>] [--readonly] [--refresh=2s] [options]'],
  about: [
    'The live terminal dashboard of a maintd fleet: queue and running tasks, cooldowns',
    '(what the sweeps skip and why), store backlog and worker health, with actions to',
    'run a target now, reset cooldowns, and park a broken store with a reason.',
  ],
  sections: [
    {
      title: 'Options',
      entries: [
        HELP_ENTRY,
        VERSION_ENTRY,
        { term: '--url=<url>', tags: ['env MAINTD_URL', `default: ${DEFAULT_URL}`], description: 'Master base URL.' },
        {
          term: '--token=<token>',
          tags: ['env MAINTD_TOKEN', 'default: unset', 'secret'],
          description: [
            "The master's MASTER_API_TOKEN; once it is set, every action needs it.",
            'Prefer the variable: flags show in ps.',
          ],
        },
        { term: '--readonly', description: 'Disable actions (r, c, p, u, P, C).' },
        {
          term: '--refresh=<duration>',
          tags: ['default: 2s'],
          description: [
            'Poll period, e.g. 2s, 500ms, 1m. Changes arrive live over /api/v1/events;',
            'polling covers the rest and the gaps.',
          ],
        },
        { term: '--timeout=<duration>', tags: ['default: 5s'], description: 'Deadline of each request.' },
        {
          term: '--guard-percent=<n>',
          tags: ['default: the master’s'],
          description: [
            "Overrides the fleet guard (TASK_COOLDOWN_MAX_PERCENT) of the Overview's gauge.",
            "Without it, the master's own, read from GET /api/v1/scheduler/policy.",
          ],
        },
      ],
    },
    {
      title: 'Keys',
      lines: [
        '1-5/Tab views, j/k move, / search, s sort, Enter detail (a cooldown: its timeline),',
        'Space mark, r run now (Stores: pick the kind), c reset cooldown, p park (with a',
        'reason), u release, P/C park/reset every match of the search (Cooldowns),',
        '? help, q quit. NO_COLOR disables colour.',
      ],
    },
  ],
});

/** Parses `2s`, `500ms`, `1m`, or bare seconds (`2`, `0.5`) into milliseconds. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return Math.round(unit === 'ms' ? n : unit === 'm' ? n * 60_000 : n * 1000);
}

/** Parses the command line and environment. Pure: no I/O, no process globals. */
export function parseCli(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  version: string,
): CliResult {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv[0] === '--' ? argv.slice(1) : [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        readonly: { type: 'boolean' },
        refresh: { type: 'string' },
        timeout: { type: 'string' },
        'guard-percent': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'V' },
      },
    }));
  } catch (err) {
    return { action: 'error', message: (err as Error).message };
  }
  if (values.help) return { action: 'help', text: USAGE };
  if (values.version) return { action: 'version', text: versionText('maintd-top', version) };

  const url = values.url ?? (env.MAINTD_URL || DEFAULT_URL);
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    return { action: 'error', message: `--url: '${url}' is not an http(s) URL` };
  }
  const refreshMs = parseDuration(values.refresh ?? '2s');
  if (refreshMs === undefined || refreshMs < 250) {
    return { action: 'error', message: `--refresh: '${values.refresh}' is not a duration of at least 250ms (e.g. 2s)` };
  }
  const timeoutMs = parseDuration(values.timeout ?? '5s');
  if (timeoutMs === undefined || timeoutMs < 100) {
    return { action: 'error', message: `--timeout: '${values.timeout}' is not a duration of at least 100ms (e.g. 5s)` };
  }
  const guardPercent = values['guard-percent'] === undefined ? undefined : Number(values['guard-percent']);
  if (guardPercent !== undefined && (!Number.isFinite(guardPercent) || guardPercent <= 0 || guardPercent > 100)) {
    return {
      action: 'error',
      message: `--guard-percent: '${values['guard-percent']}' is not a percentage in (0, 100]`,
    };
  }
  return {
    action: 'run',
    options: {
      url: url.replace(/\/+$/, ''),
      token: values.token ?? (env.MAINTD_TOKEN || undefined),
      readonly: values.readonly ?? false,
      refreshMs,
      timeoutMs,
      guardPercent,
    },
  };
}
