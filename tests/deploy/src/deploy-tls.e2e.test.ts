/**
 * docs/DEPLOY.md's three-host example, as far as one machine runs it, taken from the doc's own
 * fenced blocks so that a drift of the doc fails here: §1's certificate script, §4's named-token
 * recipe, the master and the exporter with §4's HTTPS settings (files placed as §5 installs them),
 * and the curl lines of §5's "Then:" block and of §7.
 *
 * What one machine cannot do: the certificates name maint-1.example.internal and 10.0.0.11
 * (production values, kept), which do not resolve or exist here. curl reaches the name with
 * `--resolve`; `maintd-top` has no such option and no certificate holds 127.0.0.1, so its line is
 * run up to where it needs a terminal (its --ca read and checked), not against the master. etcd
 * runs plain: its TLS and users are the fault suite's (tests/faults/src/security.e2e.test.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { type EtcdServer, eventually, freePort, startEtcd } from '@maintd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORTER_BIN, REPO_ROOT, readRepoFile, run } from './deploy-files.js';

const MASTER_BIN = join(REPO_ROOT, 'apps/master/bin/maintd.js');
const TUI_BIN = join(REPO_ROOT, 'apps/tui/bin/maintd-top.js');
const DOC = readRepoFile('docs/DEPLOY.md');
const BLOCKS = [...DOC.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** A line of §5's "Then:" block, which names it. */
const THEN = 'journalctl -u maintd -f';

/** The one fenced block of DEPLOY.md that contains `marker`. */
function block(marker: string): string {
  const found = BLOCKS.filter((b) => b.includes(marker));
  expect(found, `one block of docs/DEPLOY.md with ${marker}`).toHaveLength(1);
  return found[0]!;
}

/** `NAME=value` lines of a block. */
const assignments = (text: string): Map<string, string> =>
  new Map([...text.matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));

let dir: string;
let etcd: EtcdServer | undefined;
const children: ChildProcess[] = [];
const output: string[] = [];
const ports = { master: 0, exporter: 0 };
const tokens = { alice: '', grafana: '', default: randomBytes(32).toString('hex') };

/** `/etc/maintd/<file>` → where that file is here: the §1 file §5 installs there, or the temp dir. */
function here(text: string): string {
  const installs = new Map(
    [...block('systemctl daemon-reload').matchAll(/^install -m \d+(?: -[og] \S+)* (\S+) (\/etc\/maintd\/\S+)/gm)].map(
      (m) => [m[2]!, m[1]!],
    ),
  );
  return text.replace(/\/etc\/maintd\/[\w.-]+/g, (path) => join(dir, installs.get(path) ?? basename(path)));
}

const bash = (script: string, env: Record<string, string> = {}): ReturnType<typeof run> =>
  // --norc: bash reads bashrc when its stdin is a socket, as node's pipes are.
  run('bash', ['--norc', '-euo', 'pipefail', '-c', script], { cwd: dir, env });

function start(bin: string, env: Record<string, string>): void {
  const child = spawn(process.execPath, [bin], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'pipe' });
  for (const s of [child.stdout, child.stderr]) s.on('data', (d: Buffer) => output.push(d.toString()));
  children.push(child);
}

/** A curl line of the doc run as the doc shows it, `H` set as the "Then:" block sets it: the body and status. */
async function curl(line: string, env: Record<string, string> = {}): Promise<{ body: string; status: number }> {
  const command = line.replace(/\s+#\s.*$/, '');
  const h = assignments(block(THEN)).get('H') ?? '';
  // The certificate's name, which does not resolve here, as curl's --resolve maps it to loopback.
  const resolve = Object.values(ports).map((p) => `--resolve ${new URL(h).hostname}:${p}:127.0.0.1`);
  const script = `H=${h}\n${here(command)
    .replace('$H:8090', `$H:${ports.master}`)
    .replace('$H:9464', `$H:${ports.exporter}`)
    .replace(/^curl /, `curl ${resolve.join(' ')} -w '\\n%{http_code}' `)}`;
  const r = await bash(script, env);
  expect(r.code, `${script}\n${r.stderr}\n${output.join('')}`).toBe(0);
  const cut = r.stdout.lastIndexOf('\n');
  return { body: r.stdout.slice(0, cut), status: Number(r.stdout.slice(cut + 1)) };
}

/** The curl lines of a block, continuations joined, each with the comment that says what it answers. */
const curlLines = (text: string): string[] =>
  text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((l) => l.startsWith('curl '));
/** The JSON a line's comment says it answers. */
const expected = (line: string): string => /\s#\s.*?(\{.*)$/.exec(line)?.[1] ?? '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'maintd-deploy-tls-'));
  const certs = await bash(block('leaf() {'));
  expect(certs.code, certs.stderr).toBe(0);
  etcd = await startEtcd();
  [ports.master, ports.exporter] = [await freePort(), await freePort()];
}, 60_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? once(c, 'exit') : Promise.resolve())));
  await etcd?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

describe("docs/DEPLOY.md's three-host example with TLS everywhere and named tokens", () => {
  it('§1 makes every certificate and key that §5 installs, api-1 naming maint-1 by name and address', async () => {
    const sources = [
      ...block('systemctl daemon-reload').matchAll(/^install -m \d+(?: -[og] \S+)* (\S+\.(?:pem|key)) /gm),
    ];
    expect(sources.map((m) => m[1])).toEqual(expect.arrayContaining(['ca.pem', 'api-1.pem', 'api-1.key']));
    for (const [, file] of sources) expect(existsSync(join(dir, file!)), file).toBe(true);
    const san = await run('openssl', ['x509', '-noout', '-ext', 'subjectAltName', '-in', 'api-1.pem'], { cwd: dir });
    expect(san.stdout).toContain('DNS:maint-1.example.internal, IP Address:10.0.0.11');
  });

  it("§4's recipe writes <name> <scope> sha256:<the token's digest> lines to a file of mode 600", async () => {
    // As root of a real host, minus sudo and the chown to a `maintd` user this machine lacks.
    const recipe = here(block('sha256sum').replace(/sudo /g, '')).replace(/chown \S+ \S+ && /, '');
    expect(recipe).toContain('alice operate');
    for (const [name, scope] of [
      ['alice', 'operate'],
      ['grafana', 'read'],
    ] as const) {
      const r = await bash(`${recipe.replace('alice operate', `${name} ${scope}`)}\nprintf %s "$TOKEN"`);
      expect(r.code, r.stderr).toBe(0);
      tokens[name] = r.stdout;
    }
    const file = join(dir, 'api-tokens');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const digest = (t: string): string => createHash('sha256').update(t).digest('hex');
    expect(await readFile(file, 'utf8')).toBe(
      `alice operate sha256:${digest(tokens.alice)}\ngrafana read sha256:${digest(tokens.grafana)}\n`,
    );
  });

  it('the master serves HTTPS with §4 settings: readyz as the "Then:" block says, reads need a token', async () => {
    const doc = assignments(block('MASTER_TLS_CERT='));
    const applies = ['ETCD_PREFIX', 'MASTER_TLS_CERT', 'MASTER_TLS_KEY', 'MASTER_API_TOKENS_FILE'] as const;
    start(MASTER_BIN, {
      ...Object.fromEntries(applies.map((k) => [k, here(doc.get(k) ?? '')])),
      // The doc's endpoints are the three TLS members of other hosts; here, one plain etcd.
      ETCD_ENDPOINTS: etcd?.clientUrl ?? '',
      MASTER_API_TOKEN: tokens.default,
      MASTER_API_READS: 'token',
      MASTER_HOST: '127.0.0.1',
      MASTER_PORT: String(ports.master),
    });
    const [readyz, masters] = curlLines(block(THEN));
    await eventually(
      async () => {
        const r = await curl(readyz!);
        expect(r.status, r.body).toBe(200);
        expect(JSON.parse(r.body)).toEqual(JSON.parse(expected(readyz!)));
      },
      30_000,
      200,
    );
    for (const token of [tokens.alice, tokens.grafana, tokens.default]) {
      const r = await curl(masters!, { TOKEN: token });
      expect(r.status, r.body).toBe(200);
      expect((JSON.parse(r.body) as { masters: unknown[] }).masters).toHaveLength(1);
    }
    const anonymous = await curl(masters!.replace(/-H "Authorization: Bearer \$TOKEN" /, ''));
    expect(anonymous.status, anonymous.body).toBe(401);
  }, 60_000);

  it('§7 runs against it: a read token cannot PATCH the cluster (403), operate tokens can, audited by name', async () => {
    // The roll's checks of a restarted master, then the hold and release of cluster features.
    for (const line of curlLines(block('wait for 200'))) {
      expect((await curl(line, { TOKEN: tokens.alice })).status, line).toBe(200);
    }
    const [hold, release] = curlLines(block('preserve_downgrade'));
    const refused = await curl(hold!, { MASTER_API_TOKEN: tokens.grafana });
    expect(refused.status, refused.body).toBe(403);
    for (const [line, token] of [
      [hold!, tokens.alice],
      [release!, tokens.default],
    ] as const) {
      const r = await curl(line, { MASTER_API_TOKEN: token });
      expect(r.status, r.body).toBe(200);
    }
    const masters = curlLines(block(THEN)).at(1)!;
    const audit = await curl(masters.replace('/api/v1/masters', '/api/v1/audit'), { TOKEN: tokens.grafana });
    expect(audit.status, audit.body).toBe(200);
    const by = (who: string): unknown => ({
      who,
      client: expect.stringContaining('127.0.0.1') as unknown,
      action: 'cluster.update',
    });
    // Newest first: the release by MASTER_API_TOKEN (`default`), the hold by alice.
    expect(JSON.parse(audit.body)).toMatchObject({ entries: [by('default'), by('alice')] });
  }, 60_000);

  it('the exporter serves /metrics and /readyz over HTTPS with §4\'s EXPORTER_TLS_* as the "Then:" block says', async () => {
    const doc = assignments(block('EXPORTER_TLS_CERT='));
    start(EXPORTER_BIN, {
      EXPORTER_TLS_CERT: here(doc.get('EXPORTER_TLS_CERT') ?? ''),
      EXPORTER_TLS_KEY: here(doc.get('EXPORTER_TLS_KEY') ?? ''),
      ETCD_ENDPOINTS: etcd?.clientUrl ?? '',
      EXPORTER_HOST: '127.0.0.1',
      EXPORTER_PORT: String(ports.exporter),
    });
    const line = curlLines(block(THEN)).find((l) => l.includes('$H:9464'))!;
    // The doc elides the rest of the answer with `…`.
    const shown = JSON.parse(expected(line).replace(/,…\}$/, '}')) as Record<string, unknown>;
    await eventually(
      async () => {
        const r = await curl(line);
        expect(r.status, r.body).toBe(200);
        expect(JSON.parse(r.body)).toMatchObject(shown);
      },
      30_000,
      200,
    );
    const metrics = await curl(line.replace('/readyz', '/metrics'));
    expect(metrics.body).toMatch(/^maintd_exporter_tls_certificate_expiry_timestamp_seconds \d/m);
  }, 60_000);

  it("the dashboard's line takes §1's CA (--ca); it stops only for want of a terminal", async () => {
    const line = block(THEN)
      .split('\n')
      .find((l) => l.includes('maintd-top'))!;
    const [, env = '', args = ''] = /^(\w+)=\S+ maintd-top (.*)$/.exec(line) ?? [];
    expect(env).toBe('MAINTD_TOKEN');
    const argv = here(args.replace('$H:8090', `${assignments(block(THEN)).get('H') ?? ''}:${ports.master}`)).split(' ');
    const r = await run(process.execPath, [TUI_BIN, ...argv], { env: { MAINTD_TOKEN: tokens.alice } });
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 2,
      stderr: 'maintd-top: needs an interactive terminal (stdin and stdout must be a TTY)\n',
    });
    const bad = await run(process.execPath, [TUI_BIN, ...argv.map((a) => a.replace('ca.pem', 'no-such.pem'))]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--ca');
  });
});
