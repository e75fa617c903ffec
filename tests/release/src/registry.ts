/**
 * A private npm registry on loopback (verdaccio), as the internal registry of docs/RELEASING.md:
 * the `@maintd` scope is only what was published to it, everything else is proxied from the
 * registry this machine uses (and stored, so a test can tell what went through it).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '@maintd/core/testing';

const run = promisify(execFile);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export class TestRegistry {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** Where verdaccio stores what it was given or proxied. */
  readonly storage: string;
  readonly #child: ChildProcess;
  readonly #token: string;

  private constructor(url: string, storage: string, child: ChildProcess, token: string) {
    this.url = url;
    this.storage = storage;
    this.#child = child;
    this.#token = token;
  }

  /** Starts a registry keeping its state under `dir` (an empty directory), with one publishing user. */
  static async start(dir: string): Promise<TestRegistry> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const storage = join(dir, 'storage');
    const upstream = process.env.npm_config_registry ?? 'https://registry.npmjs.org/';
    await writeFile(
      join(dir, 'verdaccio.yaml'),
      [
        `storage: ${storage}`,
        'auth:',
        `  htpasswd: { file: ${join(dir, 'htpasswd')}, max_users: 10 }`,
        'uplinks:',
        // What it proxied stays fresh for the length of a test: a second install asks no one else.
        `  upstream: { url: ${upstream}, timeout: 60s, maxage: 30m }`,
        'packages:',
        // Our scope never falls through to the public registry: what installs is what we published.
        "  '@maintd/*': { access: $all, publish: $authenticated }",
        "  '**': { access: $all, publish: $authenticated, proxy: upstream }",
        `listen: 127.0.0.1:${port}`,
        'log: { type: stdout, format: json, level: error }',
      ].join('\n'),
    );
    const child = spawn(join(repoRoot, 'node_modules/.bin/verdaccio'), ['--config', join(dir, 'verdaccio.yaml')], {
      stdio: 'ignore',
    });
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/-/ping`)).ok) break;
      } catch {
        if (i > 300) {
          child.kill('SIGKILL');
          throw new Error('verdaccio did not start');
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const user = await fetch(`${url}/-/user/org.couchdb.user:release-bot`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'release-bot', password: 'release-bot-password' }),
    });
    const { token } = (await user.json()) as { token: string };
    return new TestRegistry(url, storage, child, token);
  }

  /** An `.npmrc` naming this registry alone, with the publishing user's token. */
  npmrc(): string {
    return `registry=${this.url}/\n//${new URL(this.url).host}/:_authToken=${this.#token}\n`;
  }

  /**
   * An `.npmrc` as docs/RELEASING.md has operators write theirs: the `@maintd` scope from this
   * registry, every other package from the registry this machine uses (and its npm cache).
   */
  scopedNpmrc(): string {
    return `@maintd:registry=${this.url}/\n//${new URL(this.url).host}/:_authToken=${this.#token}\n`;
  }

  /** `npm publish` of a packed tarball, as `userconfig` (a file holding {@link npmrc}) says. */
  async publish(tarball: string, userconfig: string): Promise<void> {
    await run('npm', ['publish', tarball, '--registry', `${this.url}/`], {
      env: { ...process.env, npm_config_userconfig: userconfig, CI: 'true' },
      maxBuffer: 16 << 20,
    }).catch((err: Error & { stderr?: string }) => {
      throw new Error(`npm publish ${tarball} failed:\n${err.stderr ?? err.message}`, { cause: err });
    });
  }

  close(): void {
    this.#child.kill('SIGKILL');
  }
}
