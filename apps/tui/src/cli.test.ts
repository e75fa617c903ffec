import { describe, expect, it } from 'vitest';
import { DEFAULT_URL, parseCli, parseDuration } from './cli.js';

const run = (argv: string[], env: Record<string, string> = {}) => {
  const r = parseCli(argv, env, '9.9.9');
  if (r.action !== 'run') throw new Error(`expected run, got ${JSON.stringify(r)}`);
  return r.options;
};

describe('parseCli', () => {
  it('defaults to the local master, 2 s refresh, 5 s timeout, actions on', () => {
    expect(run([])).toEqual({
      url: DEFAULT_URL,
      token: undefined,
      readonly: false,
      refreshMs: 2000,
      timeoutMs: 5000,
      // The guard comes from the master's policy unless --guard-percent overrides it.
      guardPercent: undefined,
      tls: { ca: undefined, cert: undefined, key: undefined },
    });
  });

  it('takes the TLS client files from --ca, --cert and --key or MAINTD_CA, MAINTD_CERT and MAINTD_KEY, flags winning', () => {
    const env = {
      MAINTD_URL: 'https://m:8090',
      MAINTD_CA: '/e/ca.pem',
      MAINTD_CERT: '/e/c.pem',
      MAINTD_KEY: '/e/k.pem',
    };
    expect(run([], env).tls).toEqual({ ca: '/e/ca.pem', cert: '/e/c.pem', key: '/e/k.pem' });
    expect(run(['--ca=/f/ca.pem', '--cert', '/f/c.pem', '--key=/f/k.pem'], env).tls).toEqual({
      ca: '/f/ca.pem',
      cert: '/f/c.pem',
      key: '/f/k.pem',
    });
    expect(run(['--url=https://m', '--ca=/f/ca.pem']).tls).toEqual({
      ca: '/f/ca.pem',
      cert: undefined,
      key: undefined,
    });
  });

  it('refuses a client certificate without its key (and the reverse), and TLS files for an http:// URL', () => {
    const error = (argv: string[], env: Record<string, string> = {}): string => {
      const r = parseCli(argv, env, '1');
      return r.action === 'error' ? r.message : `not an error: ${r.action}`;
    };
    expect(error(['--url=https://m', '--cert=/c.pem'])).toBe(
      '--cert (MAINTD_CERT) is set without --key (MAINTD_KEY): a client certificate needs both',
    );
    expect(error(['--url=https://m'], { MAINTD_KEY: '/k.pem' })).toBe(
      '--key (MAINTD_KEY) is set without --cert (MAINTD_CERT): a client certificate needs both',
    );
    expect(error(['--url=http://m', '--ca=/ca.pem'])).toBe(
      '--ca (MAINTD_CA) is set but --url is http://: TLS options need an https:// master URL',
    );
    expect(error(['--cert=/c.pem', '--key=/k.pem'])).toContain('--url is http://');
  });

  it('refuses a URL that carries a token or credentials: the token has its own option', () => {
    for (const url of ['https://m:8090/?token=s3cret', 'https://alice:s3cret@m:8090']) {
      const r = parseCli([`--url=${url}`], {}, '1');
      expect(r).toEqual({
        action: 'error',
        message: '--url: takes no query string or user:password; pass the token with --token or MAINTD_TOKEN',
      });
    }
  });

  it('documents that --ca replaces the system CAs and how to add one instead', () => {
    const r = parseCli(['--help'], {}, '1');
    const text = (r.action === 'help' ? r.text : '').replace(/\s+/g, ' ');
    expect(text).toContain('--ca=<file> (env MAINTD_CA; default: the system CAs)');
    expect(text).toContain('It replaces the system CAs');
    expect(text).toContain('set NODE_EXTRA_CA_CERTS');
    expect(text).toContain('--cert=<file> (env MAINTD_CERT; default: none)');
    expect(text).toContain('--key=<file> (env MAINTD_KEY; default: none)');
    expect(text).toContain('never in the URL');
  });

  it('takes the URL and token from MAINTD_URL and MAINTD_TOKEN, flags winning', () => {
    const env = { MAINTD_URL: 'http://m:1/', MAINTD_TOKEN: 't1' };
    expect(run([], env)).toMatchObject({ url: 'http://m:1', token: 't1' });
    expect(run(['--url', 'https://x:2', '--token=t2'], env)).toMatchObject({ url: 'https://x:2', token: 't2' });
  });

  it('parses --readonly, --refresh, --timeout and --guard-percent', () => {
    expect(run(['--readonly', '--refresh', '500ms', '--timeout', '1.5s', '--guard-percent', '10'])).toMatchObject({
      readonly: true,
      refreshMs: 500,
      timeoutMs: 1500,
      guardPercent: 10,
    });
  });

  it('rejects bad values with a message naming the option', () => {
    for (const [argv, name] of [
      [['--url', 'ftp://x'], '--url'],
      [['--refresh', 'soon'], '--refresh'],
      [['--refresh', '10ms'], '--refresh'],
      [['--guard-percent', '0'], '--guard-percent'],
      [['--nope'], 'nope'],
    ] as const) {
      const r = parseCli([...argv], {}, '1');
      expect(r.action).toBe('error');
      expect(r.action === 'error' && r.message).toContain(name);
    }
  });

  it('answers --help/-h and --version/-V', () => {
    expect(parseCli(['--help'], {}, '1').action).toBe('help');
    expect(parseCli(['-h'], {}, '1')).toEqual(parseCli(['--help'], {}, '1'));
    expect(parseCli(['--version'], {}, '9.9.9')).toEqual({ action: 'version', text: 'maintd-top 9.9.9\n' });
    expect(parseCli(['-V'], {}, '9.9.9')).toEqual({ action: 'version', text: 'maintd-top 9.9.9\n' });
  });

  it('documents --guard-percent as an override of the master’s own guard', () => {
    const r = parseCli(['--help'], {}, '1');
    const text = (r.action === 'help' ? r.text : '').replace(/\s+/g, ' ');
    expect(text).toContain('--guard-percent=<n> (default: the master’s)');
    expect(text).toContain("Overrides the fleet guard (TASK_COOLDOWN_MAX_PERCENT) of the Overview's gauge.");
    expect(text).toContain('GET /api/v1/scheduler/policy');
    expect(text).toContain('p park (with a reason), u release');
    // Every action key of the key map (state/ui.ts), so --readonly says all it disables.
    expect(text).toContain('Disable actions (r, c, p, u, P, C).');
    // The keys name no kind: which kinds there are, the masters say.
    expect(text).toContain('r run now (Stores: pick the kind)');
    expect(text).not.toMatch(/merge_wal|compact \(/);
  });

  it('documents every option in the shared help layout', () => {
    const r = parseCli(['--help'], {}, '1');
    const text = r.action === 'help' ? r.text : '';
    expect(text).toMatch(/^Usage: maintd-top /);
    for (const flag of [
      '--url=<url>',
      '--token=<token>',
      '--readonly',
      '--refresh=',
      '--timeout=',
      '--guard-percent=',
      '--ca=<file>',
      '--cert=<file>',
      '--key=<file>',
    ]) {
      expect(text).toContain(`\n  ${flag}`);
    }
    expect(text).toContain('(env MAINTD_URL; default: http://127.0.0.1:8090)');
    expect(text.trimEnd().split('\n').at(-1)).toBe(
      'Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.',
    );
  });

  it('parses durations in ms, s, m or bare seconds', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('2')).toBe(2000);
    expect(parseDuration('1m')).toBe(60_000);
    expect(parseDuration('2h')).toBeUndefined();
  });
});
