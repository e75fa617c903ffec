import { parseArgs } from 'node:util';
import { HELP_ENTRY, VERSION_ENTRY, formatHelp, stripLeadingDashDash, versionText } from '@maintd/settings';
import type { TlsPaths } from './api/tls-files.js';

/** Settings of one `maintd-top` run. */
export interface CliOptions {
  readonly url: string;
  readonly token: string | undefined;
  readonly readonly: boolean;
  readonly refreshMs: number;
  readonly timeoutMs: number;
  /** Overrides the guard percentage the master reports (undefined: the master's). */
  readonly guardPercent: number | undefined;
  /** The TLS client files for an https master (paths; read and checked by `loadTlsFiles`). */
  readonly tls: TlsPaths;
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
  usage: [
    '[--url=<url>] [--token=<token>] [--readonly] [--refresh=2s] [options]',
    '--url=https://<host>:8090 [--ca=<file>] [--cert=<file> --key=<file>] [options]',
  ],
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
            "A token of the master's MASTER_API_TOKENS_FILE (or its MASTER_API_TOKEN): actions",
            'need an operate one; the audit trail names its name.',
            'Prefer the variable: flags show in ps. Sent as a bearer header, never in the URL.',
          ],
        },
        {
          term: '--ca=<file>',
          tags: ['env MAINTD_CA', 'default: the system CAs'],
          description: [
            "PEM bundle of the CA(s) that signed an https master's certificate. It replaces",
            'the system CAs (as curl --cacert, etcdctl --cacert and Prometheus ca_file do);',
            'to add a CA to them instead, set NODE_EXTRA_CA_CERTS and leave this unset.',
          ],
        },
        {
          term: '--cert=<file>',
          tags: ['env MAINTD_CERT', 'default: none'],
          description: [
            'PEM client certificate for a master that requires one (MASTER_TLS_CLIENT_CA);',
            'with --key, both or neither.',
          ],
        },
        {
          term: '--key=<file>',
          tags: ['env MAINTD_KEY', 'default: none'],
          description: 'PEM private key of --cert (unencrypted; keep it readable by you alone).',
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
      args: stripLeadingDashDash(argv),
      strict: true,
      allowPositionals: false,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        readonly: { type: 'boolean' },
        refresh: { type: 'string' },
        timeout: { type: 'string' },
        'guard-percent': { type: 'string' },
        ca: { type: 'string' },
        cert: { type: 'string' },
        key: { type: 'string' },
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
  let parsed: URL;
  try {
    parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    return { action: 'error', message: `--url: '${url}' is not an http(s) URL` };
  }
  // A credential in the URL would travel in every request line (and into proxy logs): the
  // master refuses `?token=`, and the token has its own option (docs/ARCHITECTURE.md §3.4).
  if (parsed.search || parsed.username || parsed.password) {
    return {
      action: 'error',
      message: '--url: takes no query string or user:password; pass the token with --token or MAINTD_TOKEN',
    };
  }
  const tls = tlsPaths(values, env, parsed.protocol === 'https:');
  if (typeof tls === 'string') return { action: 'error', message: tls };
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
      tls,
    },
  };
}

/** The TLS client files the flags or environment name, or why they cannot be used. */
function tlsPaths(
  values: { readonly ca?: string | undefined; readonly cert?: string | undefined; readonly key?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
  https: boolean,
): TlsPaths | string {
  const ca = values.ca ?? (env.MAINTD_CA || undefined);
  const cert = values.cert ?? (env.MAINTD_CERT || undefined);
  const key = values.key ?? (env.MAINTD_KEY || undefined);
  if ((cert === undefined) !== (key === undefined)) {
    return cert === undefined
      ? '--key (MAINTD_KEY) is set without --cert (MAINTD_CERT): a client certificate needs both'
      : '--cert (MAINTD_CERT) is set without --key (MAINTD_KEY): a client certificate needs both';
  }
  // Ignoring them would leave the operator believing the connection is protected.
  if (!https && (ca !== undefined || cert !== undefined)) {
    const named = ca !== undefined ? '--ca (MAINTD_CA)' : '--cert (MAINTD_CERT)';
    return `${named} is set but --url is http://: TLS options need an https:// master URL`;
  }
  return { ca, cert, key };
}
