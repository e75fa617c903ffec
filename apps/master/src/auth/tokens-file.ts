import { type Stats, unwatchFile, watchFile } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { MaintdError } from '@maintd/core';
import type { Logger } from 'pino';
import { type ApiToken, DEFAULT_TOKEN_NAME, defaultToken } from './api-token.js';
import type { SubjectGrant } from './subject-grant.js';
import { parseTokensFile } from './tokens-file-parser.js';

const SETTING = 'MASTER_API_TOKENS_FILE';

/** What a tokens file grants: named tokens (by digest) and named client certificate subjects. */
export interface TokensFileEntries {
  readonly tokens: readonly ApiToken[];
  readonly subjects: readonly SubjectGrant[];
}

/**
 * Reads and checks a tokens file (docs/ARCHITECTURE.md §3.4): readable, owner-only (like an ssh
 * key, a file that group or others may read is refused), well formed, and without the name
 * `default` when `MASTER_API_TOKEN` holds it. Fails with a {@link MaintdError} naming the setting,
 * the path and the reason: startup exits 2 on it, a reload keeps the previous entries.
 */
export async function readTokensFile(path: string, withDefault: boolean): Promise<TokensFileEntries> {
  const fail = (why: string, cause?: unknown): never => {
    throw new MaintdError(`${SETTING}: '${path}' ${why}`, cause === undefined ? undefined : { cause });
  };
  let text = '';
  try {
    const st = await stat(path);
    if (!st.isFile()) fail('is not a file');
    if ((st.mode & 0o077) !== 0) {
      fail(`is readable or writable by group or others (mode ${(st.mode & 0o777).toString(8)}): chmod 600 it`);
    }
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof MaintdError) throw err;
    fail(`cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, err);
  }
  const parsed = parseTokensFile(text);
  if (!parsed.ok) return fail(parsed.error);
  if (withDefault && parsed.tokens.some((t) => t.name === DEFAULT_TOKEN_NAME)) {
    fail(`names a token "${DEFAULT_TOKEN_NAME}", the name MASTER_API_TOKEN goes by: rename it`);
  }
  return { tokens: parsed.tokens, subjects: parsed.subjects };
}

/** How often the file's status is polled: a change takes effect within this. */
const POLL_MS = 1000;

/**
 * The master's named tokens, kept current: `MASTER_API_TOKEN` (as `default`) and the tokens file,
 * re-read when the file changes on disk. A bad new version is logged and the previous tokens stay
 * in force. Polled with `watchFile`, which also sees a file replaced by a rename (as editors and
 * configuration tools write it), where `fs.watch` would keep watching the old inode.
 */
export class TokensFile {
  #tokens: readonly ApiToken[];
  #subjects: readonly SubjectGrant[];
  #reading: Promise<void> = Promise.resolve();
  readonly #listener: (cur: Stats, prev: Stats) => void;

  private constructor(
    private readonly path: string,
    private readonly fixed: readonly ApiToken[],
    entries: TokensFileEntries,
    private readonly logger: Logger,
  ) {
    this.#tokens = [...fixed, ...entries.tokens];
    this.#subjects = entries.subjects;
    this.#listener = (cur, prev) => {
      if (cur.mtimeMs === prev.mtimeMs && cur.size === prev.size && cur.mode === prev.mode && cur.ino === prev.ino) {
        return;
      }
      this.#reading = this.#reading.then(() => this.reload());
    };
    watchFile(path, { interval: POLL_MS, persistent: false }, this.#listener);
  }

  /** Reads the file once (failing as {@link readTokensFile} does), then watches it. */
  static async open(path: string, apiToken: string | undefined, logger: Logger): Promise<TokensFile> {
    const fixed = defaultToken(apiToken);
    const entries = await readTokensFile(path, fixed.length > 0);
    return new TokensFile(path, fixed, entries, logger);
  }

  /** The tokens in force now. */
  tokens(): readonly ApiToken[] {
    return this.#tokens;
  }

  /** The client certificate subjects mapped to names in force now. */
  subjects(): readonly SubjectGrant[] {
    return this.#subjects;
  }

  /** Stops watching the file. */
  close(): void {
    unwatchFile(this.path, this.#listener);
  }

  private async reload(): Promise<void> {
    try {
      const { tokens, subjects } = await readTokensFile(this.path, this.fixed.length > 0);
      this.#tokens = [...this.fixed, ...tokens];
      this.#subjects = subjects;
      // Names and scopes only: neither a digest nor a subject is logged.
      this.logger.info(
        {
          tokens: tokens.map((t) => `${t.name}:${t.scope}`),
          subjects: subjects.map((g) => `${g.name}:${g.scope}`),
        },
        `${SETTING} reloaded`,
      );
    } catch (err) {
      this.logger.error(
        { err: { message: (err as Error).message } },
        `${SETTING} not reloaded, the previous tokens stay in force: ${(err as Error).message}`,
      );
    }
  }
}
