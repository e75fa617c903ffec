import { DEFAULT_COOLDOWN_POLICY, MIN_SESSION_TTL_SECS } from '@maintd/core';
import { describe, expect, it, vi } from 'vitest';
import type { LoadConfigInput } from '@maintd/scheduler';
import type { MasterConfig as Config } from './config.js';
import { type LoadResult, loadConfig, settings } from './settings.js';

function load(
  argv: readonly string[] = [],
  env: Record<string, string | undefined> = {},
  extra: Partial<LoadConfigInput> = {},
): LoadResult {
  return loadConfig({ argv, env, hostname: 'host', pid: 42, random: () => 'r4nd', ...extra });
}

function config(argv: readonly string[] = [], env: Record<string, string | undefined> = {}): Config {
  const r = load(argv, env);
  if (r.action !== 'run') throw new Error(`expected run, got ${JSON.stringify(r)}`);
  return r.config;
}

function error(argv: readonly string[] = [], env: Record<string, string | undefined> = {}): string {
  const r = load(argv, env);
  if (r.action !== 'error') throw new Error(`expected error, got ${JSON.stringify(r)}`);
  return r.message;
}

function text(argv: readonly string[], env: Record<string, string | undefined> = {}): string {
  const r = load(argv, env);
  if (r.action !== 'help' && r.action !== 'print-config') throw new Error(`expected text, got ${JSON.stringify(r)}`);
  return r.text;
}

/** `KEY=value` lines back into an env record (values may be JSON-quoted). */
function parseLines(out: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of out.trimEnd().split('\n')) {
    const eq = line.indexOf('=');
    const v = line.slice(eq + 1);
    m.set(line.slice(0, eq), v.startsWith('"') ? (JSON.parse(v) as string) : v);
  }
  return m;
}

const DOCUMENTED = [
  'MASTER_HOST',
  'MASTER_PORT',
  'MASTER_ID',
  'MASTER_API_TOKEN',
  'MASTER_API_TOKENS_FILE',
  'MASTER_API_READS',
  'MASTER_TLS_CERT',
  'MASTER_TLS_KEY',
  'MASTER_TLS_CLIENT_CA',
  'ETCD_ENDPOINTS',
  'ETCD_PREFIX',
  'ETCD_USERNAME',
  'ETCD_PASSWORD',
  'ETCD_CA_CERT',
  'ETCD_CLIENT_CERT',
  'ETCD_CLIENT_KEY',
  'ETCD_LEASE_TTL_SECS',
  'WORKER_ENDPOINTS',
  'WORKER_TOKEN',
  'WORKER_TIMEOUT_SECS',
  'STATS_SCAN_INTERVAL_SECS',
  'MERGE_WAL_INTERVAL_SECS',
  'MERGE_WAL_MIN_GENERATIONS',
  'COMPACTION_INTERVAL_SECS',
  'MIN_FRAGMENTS',
  'SWEEP_MAX_NEW_TASKS',
  'TASK_CONCURRENCY',
  'MERGE_WAL_CONCURRENCY',
  'TASK_MAX_ATTEMPTS',
  'TASK_HISTORY_LIMIT',
  'TASK_HISTORY_TTL_SECS',
  'TASK_TIMELINE_LIMIT',
  'TASK_TIMELINE_TTL_SECS',
  'AUDIT_LIMIT',
  'AUDIT_TTL_SECS',
  'TASK_COOLDOWN_AFTER_FAILURES',
  'TASK_COOLDOWN_BASE_SECS',
  'TASK_COOLDOWN_MAX_SECS',
  'TASK_COOLDOWN_JITTER',
  'TASK_COOLDOWN_KINDS',
  'TASK_COOLDOWN_MAX_PERCENT',
  'TASK_COOLDOWN_COUNT_INFRA',
  'TASK_WINDOWS',
  'TASK_WINDOWS_TZ',
  'SHUTDOWN_GRACE_SECS',
  'LOG_LEVEL',
  'LOG_FORMAT',
];

const SECRETS = ['MASTER_API_TOKEN', 'ETCD_PASSWORD', 'WORKER_TOKEN'];

describe('loadConfig defaults', () => {
  it('produces the documented defaults when nothing is set', () => {
    expect(config()).toEqual({
      host: '0.0.0.0',
      port: 8090,
      masterId: 'host-42-r4nd',
      apiToken: undefined,
      apiTokensFile: undefined,
      apiReads: 'open',
      tls: undefined,
      etcd: {
        endpoints: [],
        prefix: '/maintd',
        username: undefined,
        password: undefined,
        caCert: undefined,
        clientCert: undefined,
        clientKey: undefined,
        leaseTtlSecs: 30,
      },
      workers: { endpoints: [], token: undefined, timeoutSecs: 60 },
      intervals: { statsScanSecs: 60 },
      sweeps: {
        maxNewTasks: 256,
        kinds: { merge_wal: { intervalSecs: 600, threshold: 8 }, compact: { intervalSecs: 600, threshold: 16 } },
      },
      pools: { taskConcurrency: 4, own: { merge: 4 } },
      tasks: { maxAttempts: 5, historyLimit: 1000, historyTtlSecs: 86400, timelineLimit: 50, timelineTtlSecs: 2592000 },
      audit: { limit: 10000, ttlSecs: 7776000 },
      cooldown: {
        afterFailures: 3,
        baseSecs: 600,
        maxSecs: 21600,
        jitter: 0.1,
        kinds: 'all',
        maxPercent: 25,
        countInfrastructure: false,
      },
      windows: { tz: 'UTC', list: [] },
      shutdownGraceSecs: 30,
      logLevel: 'info',
      logFormat: 'auto',
    } satisfies Config);
  });

  it('reads maintenance windows per kind in their zone', () => {
    const { windows } = config([], {
      TASK_WINDOWS: 'compact=22:00-05:00,index_id=22:00-05:00;12:00-13:00',
      TASK_WINDOWS_TZ: 'Europe/Berlin',
    });
    expect(windows.tz).toBe('Europe/Berlin');
    expect(windows.list.map((w) => [w.kind, w.spec, w.tz])).toEqual([
      ['compact', '22:00-05:00', 'Europe/Berlin'],
      ['index_id', '22:00-05:00;12:00-13:00', 'Europe/Berlin'],
    ]);
  });

  it('stops startup on a bad window or zone, naming the setting', () => {
    expect(error([], { TASK_WINDOWS: 'compact=22:00' })).toMatch(
      /^invalid TASK_WINDOWS \(--task-windows\): .*HH:MM-HH:MM/,
    );
    expect(error([], { TASK_WINDOWS: 'vacuum=22:00-05:00' })).toMatch(/^invalid TASK_WINDOWS .*expected kinds among/);
    expect(error([], { TASK_WINDOWS_TZ: 'Mars/Olympus' })).toMatch(/^invalid TASK_WINDOWS_TZ .*IANA time zone/);
  });

  it('defaults the cooldown policy to the one core documents', () => {
    expect(config().cooldown).toEqual(DEFAULT_COOLDOWN_POLICY);
  });

  it('defaults MASTER_ID to <hostname>-<pid>-<random>, drawing the random part only when needed', () => {
    const random = vi.fn(() => 'x7q');
    const r = load([], {}, { hostname: 'node-a', pid: 1234, random });
    expect(r.action === 'run' && r.config.masterId).toBe('node-a-1234-x7q');
    random.mockClear();
    const s = load([], { MASTER_ID: 'm1' }, { random });
    expect(s.action === 'run' && s.config.masterId).toBe('m1');
    expect(random).not.toHaveBeenCalled();
  });

  it('maps an empty ETCD_ENDPOINTS to no endpoints (the embedded store)', () => {
    expect(config([], { ETCD_ENDPOINTS: '' }).etcd.endpoints).toEqual([]);
    expect(config(['--etcd-endpoints='], { ETCD_ENDPOINTS: 'http://e:2379' }).etcd.endpoints).toEqual([]);
  });

  it('treats an empty env var as unset', () => {
    expect(config([], { MASTER_PORT: '', LOG_LEVEL: '', MASTER_API_TOKEN: '' })).toMatchObject({
      port: 8090,
      logLevel: 'info',
      apiToken: undefined,
      apiTokensFile: undefined,
      apiReads: 'open',
    });
  });

  it('reads nothing from process.env itself', () => {
    vi.stubEnv('MASTER_PORT', '9999');
    try {
      expect(config().port).toBe(8090);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('the API token settings', () => {
  it('read the tokens file path and the reads mode, refusing a mode other than open or token', () => {
    expect(config([], { MASTER_API_TOKENS_FILE: '/etc/maintd/tokens', MASTER_API_READS: 'token' })).toMatchObject({
      apiTokensFile: '/etc/maintd/tokens',
      apiReads: 'token',
    });
    expect(error([], { MASTER_API_READS: 'closed' })).toMatch(/MASTER_API_READS/);
    expect(error([], { MASTER_API_READS: 'token' })).toMatch(
      /MASTER_API_READS.*needs MASTER_API_TOKEN or MASTER_API_TOKENS_FILE/,
    );
  });

  it('print the tokens file path, never what it holds, in --print-config', () => {
    expect(text(['--print-config'], { MASTER_API_TOKENS_FILE: '/etc/maintd/tokens' })).toMatch(
      /^MASTER_API_TOKENS_FILE=\/etc\/maintd\/tokens$/m,
    );
  });
});

describe('the API TLS settings', () => {
  it('read the certificate, key and client CA paths, in pairs, and print the paths, never the files', () => {
    const env = { MASTER_TLS_CERT: '/etc/maintd/api.crt', MASTER_TLS_KEY: '/etc/maintd/api.key' };
    expect(config([], env).tls).toEqual({
      prefix: 'MASTER',
      cert: '/etc/maintd/api.crt',
      key: '/etc/maintd/api.key',
      clientCa: undefined,
    });
    expect(config([], { ...env, MASTER_TLS_CLIENT_CA: '/etc/maintd/clients.crt' }).tls?.clientCa).toBe(
      '/etc/maintd/clients.crt',
    );
    expect(error([], { MASTER_TLS_CERT: '/c' })).toMatch(/^invalid MASTER_TLS_KEY .*required because MASTER_TLS_CERT/);
    expect(error([], { MASTER_TLS_CLIENT_CA: '/a' })).toMatch(/^invalid MASTER_TLS_CERT .*MASTER_TLS_CLIENT_CA is set/);
    const printed = parseLines(text(['--print-config'], env));
    expect(printed.get('MASTER_TLS_CERT')).toBe('/etc/maintd/api.crt');
    expect(printed.get('MASTER_TLS_KEY')).toBe('/etc/maintd/api.key');
  });
});

describe('the settings list', () => {
  it('holds exactly the settings docs/ARCHITECTURE.md §3.1 and §2.7 document, in that order', () => {
    expect(settings.map((s) => s.env)).toEqual(DOCUMENTED);
  });

  it('gives every setting a flag derived from its env var, a default and a description', () => {
    for (const s of settings) {
      expect(s.flag).toBe(`--${s.env.toLowerCase().replaceAll('_', '-')}`);
      expect(s.defaultText).not.toBe('');
      expect(s.description).toMatch(/^\S.*\.$/);
      expect(s.description).not.toContain('\n');
    }
  });

  it('marks exactly the tokens and the etcd password as secret', () => {
    expect(settings.filter((s) => s.secret).map((s) => s.env)).toEqual(SECRETS);
  });

  it('documents every setting in --help with its flag, env var, default and description', () => {
    const help = text(['--help']);
    for (const s of settings) {
      const line = help.split('\n').find((l) => l.trimStart().startsWith(s.flag + (s.boolean ? '[' : '=')));
      expect(line, s.env).toBeDefined();
      expect(line).toContain(`env ${s.env}`);
      expect(line).toContain(`default: ${s.defaultText}`);
      expect(help).toContain(s.description);
    }
    expect(help).toContain('--print-config');
  });

  it('lists every setting in --print-config, one KEY=value line each, in schema order', () => {
    const lines = text(['--print-config']).trimEnd().split('\n');
    expect(lines.map((l) => l.slice(0, l.indexOf('=')))).toEqual(settings.map((s) => s.env));
  });

  it('answers -h and --help with help even when other flags are wrong', () => {
    expect(load(['-h']).action).toBe('help');
    expect(load(['--nope', '--master-port=abc', '--help']).action).toBe('help');
    expect(load(['--version']).action).toBe('version');
    expect(load(['-V'], { MASTER_PORT: 'abc' }).action).toBe('version');
  });
});

describe('precedence', () => {
  it('takes a flag over the env var, and the env var over the default', () => {
    expect(config([], { MASTER_PORT: '9000' }).port).toBe(9000);
    expect(config(['--master-port', '9001'], { MASTER_PORT: '9000' }).port).toBe(9001);
    expect(config(['--master-port=9002'], { MASTER_PORT: '9000' }).port).toBe(9002);
    expect(config(['--log-level=debug'], { LOG_LEVEL: 'warn' }).logLevel).toBe('debug');
    expect(config(['--log-format=pretty'], { LOG_FORMAT: 'json' }).logFormat).toBe('pretty');
    expect(config([], { LOG_FORMAT: ' JSON ' }).logFormat).toBe('json');
  });

  it('resets a setting to its default with an empty flag, overriding the env var', () => {
    expect(config(['--master-port='], { MASTER_PORT: '9000' }).port).toBe(8090);
    expect(config(['--worker-token='], { WORKER_TOKEN: 't' }).workers.token).toBeUndefined();
  });

  it('reads boolean flags as --flag (true) and --flag=false', () => {
    expect(config(['--task-cooldown-count-infra']).cooldown.countInfrastructure).toBe(true);
    expect(
      config(['--task-cooldown-count-infra=false'], { TASK_COOLDOWN_COUNT_INFRA: 'true' }).cooldown.countInfrastructure,
    ).toBe(false);
    expect(config([], { TASK_COOLDOWN_COUNT_INFRA: 'TRUE' }).cooldown.countInfrastructure).toBe(true);
  });

  it('lets the last of a repeated flag win', () => {
    expect(config(['--master-port=1', '--master-port=2']).port).toBe(2);
  });
});

describe('parsing values', () => {
  it('accepts 0 for intervals, disabling those loops', () => {
    const c = config([], {
      STATS_SCAN_INTERVAL_SECS: '0',
      MERGE_WAL_INTERVAL_SECS: '0',
      COMPACTION_INTERVAL_SECS: '0',
    });
    expect(c.intervals).toEqual({ statsScanSecs: 0 });
    expect(c.sweeps.kinds.merge_wal?.intervalSecs).toBe(0);
    expect(c.sweeps.kinds.compact?.intervalSecs).toBe(0);
  });

  it('accepts the boundary values of every range', () => {
    const c = config([], {
      MASTER_PORT: '65535',
      ETCD_LEASE_TTL_SECS: String(MIN_SESSION_TTL_SECS),
      MERGE_WAL_CONCURRENCY: '0',
      TASK_HISTORY_TTL_SECS: '0',
      TASK_COOLDOWN_AFTER_FAILURES: '0',
      TASK_COOLDOWN_BASE_SECS: '60',
      TASK_COOLDOWN_MAX_SECS: '60',
      TASK_COOLDOWN_JITTER: '0.99',
      TASK_COOLDOWN_MAX_PERCENT: '100',
      SHUTDOWN_GRACE_SECS: '0',
    });
    expect(c.port).toBe(65535);
    expect(c.etcd.leaseTtlSecs).toBe(MIN_SESSION_TTL_SECS);
    expect(c.pools.own).toEqual({ merge: 0 });
    expect(c.tasks.historyTtlSecs).toBe(0);
    expect(c.cooldown).toMatchObject({ afterFailures: 0, baseSecs: 60, maxSecs: 60, jitter: 0.99, maxPercent: 100 });
    expect(c.shutdownGraceSecs).toBe(0);
  });

  it('splits endpoint lists on commas, trims blanks and trailing slashes', () => {
    const c = config([], {
      ETCD_ENDPOINTS: 'http://e1:2379, https://e2:2379/,',
      WORKER_ENDPOINTS: 'http://w1:8080/, http://w2:8080/prefix//',
    });
    expect(c.etcd.endpoints).toEqual(['http://e1:2379', 'https://e2:2379']);
    expect(c.workers.endpoints).toEqual(['http://w1:8080', 'http://w2:8080/prefix']);
  });

  it('reads TASK_COOLDOWN_KINDS as all or a list, in kind order', () => {
    expect(config([], { TASK_COOLDOWN_KINDS: 'all' }).cooldown.kinds).toBe('all');
    expect(config([], { TASK_COOLDOWN_KINDS: 'compact' }).cooldown.kinds).toEqual(['compact']);
    expect(config([], { TASK_COOLDOWN_KINDS: ' compact , merge_wal ' }).cooldown.kinds).toEqual([
      'merge_wal',
      'compact',
    ]);
  });

  it('keeps etcd auth and TLS when set consistently', () => {
    const c = config([], {
      ETCD_ENDPOINTS: 'https://e:2379',
      ETCD_USERNAME: 'u',
      ETCD_PASSWORD: 'p w',
      ETCD_CA_CERT: '/ca.pem',
      ETCD_CLIENT_CERT: '/c.pem',
      ETCD_CLIENT_KEY: '/k.pem',
    });
    expect(c.etcd).toMatchObject({
      username: 'u',
      password: 'p w',
      caCert: '/ca.pem',
      clientCert: '/c.pem',
      clientKey: '/k.pem',
    });
  });
});

describe('invalid configuration', () => {
  const etcd = { ETCD_ENDPOINTS: 'http://e:2379' };
  const cases: readonly {
    readonly name: string;
    readonly env?: Record<string, string>;
    readonly argv?: readonly string[];
    readonly setting: string;
    readonly shows?: string;
  }[] = [
    { name: 'a non-numeric port', env: { MASTER_PORT: 'abc' }, setting: 'MASTER_PORT', shows: '"abc"' },
    { name: 'port 0', env: { MASTER_PORT: '0' }, setting: 'MASTER_PORT', shows: '"0"' },
    { name: 'port 65536', argv: ['--master-port=65536'], setting: 'MASTER_PORT', shows: '"65536"' },
    {
      name: 'a negative interval',
      env: { MERGE_WAL_INTERVAL_SECS: '-1' },
      setting: 'MERGE_WAL_INTERVAL_SECS',
      shows: '"-1"',
    },
    { name: 'a fractional integer', env: { TASK_CONCURRENCY: '1.5' }, setting: 'TASK_CONCURRENCY', shows: '"1.5"' },
    { name: 'an exponent', env: { MIN_FRAGMENTS: '1e3' }, setting: 'MIN_FRAGMENTS', shows: '"1e3"' },
    {
      name: 'an interval a timer cannot wait',
      env: { STATS_SCAN_INTERVAL_SECS: '9999999' },
      setting: 'STATS_SCAN_INTERVAL_SECS',
    },
    { name: 'TASK_CONCURRENCY 0', env: { TASK_CONCURRENCY: '0' }, setting: 'TASK_CONCURRENCY' },
    { name: 'TASK_HISTORY_LIMIT 0', env: { TASK_HISTORY_LIMIT: '0' }, setting: 'TASK_HISTORY_LIMIT' },
    { name: 'WORKER_TIMEOUT_SECS 0', env: { WORKER_TIMEOUT_SECS: '0' }, setting: 'WORKER_TIMEOUT_SECS' },
    { name: 'lease TTL 4', env: { ETCD_LEASE_TTL_SECS: '4' }, setting: 'ETCD_LEASE_TTL_SECS', shows: '"4"' },
    { name: 'jitter 1', env: { TASK_COOLDOWN_JITTER: '1' }, setting: 'TASK_COOLDOWN_JITTER', shows: '"1"' },
    { name: 'negative jitter', env: { TASK_COOLDOWN_JITTER: '-0.1' }, setting: 'TASK_COOLDOWN_JITTER' },
    {
      name: 'max percent 101',
      env: { TASK_COOLDOWN_MAX_PERCENT: '101' },
      setting: 'TASK_COOLDOWN_MAX_PERCENT',
      shows: '"101"',
    },
    {
      name: 'an unknown cooldown kind',
      env: { TASK_COOLDOWN_KINDS: 'merge_wal,vacuum' },
      setting: 'TASK_COOLDOWN_KINDS',
      shows: 'vacuum',
    },
    { name: 'an empty cooldown kind list', argv: ['--task-cooldown-kinds=,'], setting: 'TASK_COOLDOWN_KINDS' },
    { name: 'a bad log level', env: { LOG_LEVEL: 'verbose' }, setting: 'LOG_LEVEL', shows: '"verbose"' },
    { name: 'a bad log format', env: { LOG_FORMAT: 'text' }, setting: 'LOG_FORMAT', shows: '"text"' },
    {
      name: 'a bad boolean',
      env: { TASK_COOLDOWN_COUNT_INFRA: 'maybe' },
      setting: 'TASK_COOLDOWN_COUNT_INFRA',
      shows: '"maybe"',
    },
    {
      name: 'a non-URL worker endpoint',
      env: { WORKER_ENDPOINTS: 'http://w1,not a url' },
      setting: 'WORKER_ENDPOINTS',
      shows: '"not a url"',
    },
    {
      name: 'a non-http worker endpoint',
      env: { WORKER_ENDPOINTS: 'ftp://w1' },
      setting: 'WORKER_ENDPOINTS',
      shows: '"ftp://w1"',
    },
    {
      name: 'a worker endpoint with a query',
      env: { WORKER_ENDPOINTS: 'http://w1/?a=1' },
      setting: 'WORKER_ENDPOINTS',
    },
    {
      name: 'a worker endpoint listed twice',
      env: { WORKER_ENDPOINTS: 'http://w1,http://w1/' },
      setting: 'WORKER_ENDPOINTS',
    },
    { name: 'an etcd endpoint without a scheme', env: { ETCD_ENDPOINTS: 'localhost:2379' }, setting: 'ETCD_ENDPOINTS' },
    { name: 'an etcd endpoint with a path', env: { ETCD_ENDPOINTS: 'http://e:2379/v3' }, setting: 'ETCD_ENDPOINTS' },
    { name: 'a MASTER_ID with a slash', env: { MASTER_ID: 'a/b' }, setting: 'MASTER_ID', shows: '"a/b"' },
    { name: 'a MASTER_HOST with a space', env: { MASTER_HOST: 'a b' }, setting: 'MASTER_HOST' },
    { name: 'a username without a password', env: { ...etcd, ETCD_USERNAME: 'u' }, setting: 'ETCD_PASSWORD' },
    { name: 'a password without a username', env: { ...etcd, ETCD_PASSWORD: 'p' }, setting: 'ETCD_USERNAME' },
    {
      name: 'a client cert without a key',
      env: { ...etcd, ETCD_CA_CERT: '/ca', ETCD_CLIENT_CERT: '/c' },
      setting: 'ETCD_CLIENT_KEY',
    },
    {
      name: 'a client key without a cert',
      env: { ...etcd, ETCD_CA_CERT: '/ca', ETCD_CLIENT_KEY: '/k' },
      setting: 'ETCD_CLIENT_CERT',
    },
    {
      name: 'a client cert without a CA',
      env: { ...etcd, ETCD_CLIENT_CERT: '/c', ETCD_CLIENT_KEY: '/k' },
      setting: 'ETCD_CA_CERT',
    },
    {
      name: 'etcd credentials with no etcd endpoints',
      env: { ETCD_USERNAME: 'u', ETCD_PASSWORD: 'p' },
      setting: 'ETCD_ENDPOINTS',
    },
    {
      name: 'a cooldown max below the base',
      env: { TASK_COOLDOWN_BASE_SECS: '600', TASK_COOLDOWN_MAX_SECS: '599' },
      setting: 'TASK_COOLDOWN_MAX_SECS',
    },
  ];

  it.each(cases)('rejects $name with an error naming $setting and its flag', (c) => {
    const message = error(c.argv ?? [], c.env ?? {});
    const flag = `--${c.setting.toLowerCase().replaceAll('_', '-')}`;
    expect(message).toContain(`invalid ${c.setting} (${flag}): `);
    if (c.shows !== undefined) expect(message).toContain(c.shows);
  });

  it('words a bad port as the documented example', () => {
    expect(error([], { MASTER_PORT: 'abc' })).toBe(
      'invalid MASTER_PORT (--master-port): expected a whole number from 1 to 65535, got "abc"',
    );
  });

  it('reports every problem at once, one per line', () => {
    const lines = error(['--bogus'], {
      MASTER_PORT: 'abc',
      LOG_LEVEL: 'loud',
      TASK_COOLDOWN_BASE_SECS: 'x',
      ETCD_ENDPOINTS: 'http://e:2379',
      ETCD_USERNAME: 'u',
    }).split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toContain('--bogus');
    for (const env of ['MASTER_PORT', 'LOG_LEVEL', 'TASK_COOLDOWN_BASE_SECS', 'ETCD_PASSWORD']) {
      expect(lines.some((l) => l.startsWith(`invalid ${env} `))).toBe(true);
    }
  });

  it('rejects an unknown flag, naming it', () => {
    expect(error(['--master-prot=1'])).toContain('unknown flag --master-prot');
    expect(error(['-x'])).toContain('unknown flag -x');
  });

  it('rejects positional arguments and a flag with no value', () => {
    expect(error(['serve'])).toContain('unexpected argument #1');
    // A misspelled secret flag leaves its value behind as a positional: it is never echoed.
    const typo = error(['--master-api-tokn', 's3cr3t-value']);
    expect(typo).toContain('unknown flag --master-api-tokn');
    expect(typo).toContain('unexpected argument #2');
    expect(typo).not.toContain('s3cr3t-value');
    expect(error(['--master-port'])).toContain('--master-port (MASTER_PORT) needs a value');
    expect(error(['--master-port', '--log-level=debug'])).toContain('--master-port (MASTER_PORT) needs a value');
    expect(error(['--help=yes'])).toContain('--help takes no value');
  });
});

describe('secrets', () => {
  const tokens = { MASTER_API_TOKEN: 'api-s3cret', WORKER_TOKEN: 'wrk-s3cret' };
  const etcdAuth = { ETCD_ENDPOINTS: 'http://e:2379', ETCD_USERNAME: 'root', ETCD_PASSWORD: 'pw-s3cret' };

  it('redacts set secrets in --print-config and leaves unset ones empty', () => {
    const set = parseLines(text(['--print-config'], { ...tokens, ...etcdAuth }));
    const unset = parseLines(text(['--print-config']));
    for (const env of SECRETS) {
      expect(set.get(env)).toBe('<redacted>');
      expect(unset.get(env)).toBe('');
    }
    expect(set.get('ETCD_USERNAME')).toBe('root');
    const out = text(['--print-config'], { ...tokens, ...etcdAuth });
    for (const secret of ['api-s3cret', 'wrk-s3cret', 'pw-s3cret']) expect(out).not.toContain(secret);
  });

  it('never echoes a secret in an error message', () => {
    const messages = [
      error([], { MASTER_API_TOKEN: 'api s3cret' }),
      error(['--worker-token=wrk s3cret']),
      error([], { ETCD_ENDPOINTS: 'http://e:2379', ETCD_PASSWORD: 'pw-s3cret' }),
      error([], { ETCD_PASSWORD: 'pw-s3cret', ETCD_USERNAME: 'u' }),
      error([], { ...tokens, ...etcdAuth, MASTER_PORT: 'abc' }),
    ];
    expect(messages[0]).toContain('invalid MASTER_API_TOKEN (--master-api-token)');
    expect(messages[1]).toContain('invalid WORKER_TOKEN (--worker-token)');
    for (const m of messages) expect(m).not.toMatch(/s3cret/);
  });

  it('never echoes credentials embedded in an endpoint URL', () => {
    for (const value of ['http://u:pw-s3cret@e:2379', 'bad,http://u:pw-s3cret@e:2379', 'u:pw-s3cret@e:2379']) {
      const m = error([], { ETCD_ENDPOINTS: value });
      expect(m).toContain('invalid ETCD_ENDPOINTS (--etcd-endpoints)');
      expect(m).not.toContain('s3cret');
    }
  });
});

describe('--print-config', () => {
  it('shows the effective values, flags applied', () => {
    const out = parseLines(
      text(['--print-config', '--master-port=9000', '--task-cooldown-kinds=compact'], {
        WORKER_ENDPOINTS: 'http://w1/,http://w2',
        MASTER_ID: 'm1',
      }),
    );
    expect(out.get('MASTER_PORT')).toBe('9000');
    expect(out.get('MASTER_ID')).toBe('m1');
    expect(out.get('WORKER_ENDPOINTS')).toBe('http://w1,http://w2');
    expect(out.get('TASK_COOLDOWN_KINDS')).toBe('compact');
    expect(out.get('TASK_COOLDOWN_COUNT_INFRA')).toBe('false');
    expect(out.get('ETCD_ENDPOINTS')).toBe('');
  });

  it('prints lines that, fed back as env vars, reproduce the same config', () => {
    const env = {
      MASTER_ID: 'm-1',
      ETCD_ENDPOINTS: 'http://e1:2379,http://e2:2379',
      ETCD_CA_CERT: '/etc/maintd/ca cert.pem',
      WORKER_ENDPOINTS: 'https://w1/base/',
      TASK_COOLDOWN_JITTER: '0.25',
      TASK_COOLDOWN_KINDS: 'merge_wal',
      TASK_COOLDOWN_COUNT_INFRA: 'yes',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'pretty',
    };
    const printed = Object.fromEntries(parseLines(text(['--print-config'], env)));
    expect(config([], printed)).toEqual(config([], env));
  });

  it('reports an invalid configuration instead of printing it', () => {
    expect(load(['--print-config'], { MASTER_PORT: 'abc' }).action).toBe('error');
  });
});
