import { type Stats, unwatchFile, watchFile } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { MaintdError } from '@maintd/core';
import type { Logger } from 'pino';
import { type ApiToken, DEFAULT_TOKEN_NAME, defaultToken } from './api-token.js';
import { parseTokensFile } from './tokens-file-parser.js';

const SETTING = 'MASTER_API_TOKENS_FILE';

/**
 * Reads and checks a tokens file (docs/ARCHITECTURE.md §3.4): readable, owner-only (like an ssh
 * key, a file that group or others may read is refused), well formed, and without the name
 * `default` when `MASTER_API_TOKEN` holds it. Fails with a {@link MaintdError} naming the setting,
 * the path and the reason: startup exits 2 on it, a reload keeps the previous entries.
 */
export async function readTokensFile(path: string, withDefault: boolean): Promise<readonly ApiToken[]> {
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
  return parsed.tokens;
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
  #reading: Promise<void> = Promise.resolve();
  readonly #listener: (cur: Stats, prev: Stats) => void;

  private constructor(
    private readonly path: string,
    private readonly fixed: readonly ApiToken[],
    fileTokens: readonly ApiToken[],
    private readonly logger: Logger,
  ) {
    this.#tokens = [...fixed, ...fileTokens];
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
    const tokens = await readTokensFile(path, fixed.length > 0);
    return new TokensFile(path, fixed, tokens, logger);
  }

  /** The tokens in force now. */
  tokens(): readonly ApiToken[] {
    return this.#tokens;
  }

  /** Stops watching the file. */
  close(): void {
    unwatchFile(this.path, this.#listener);
  }

  private async reload(): Promise<void> {
    try {
      const tokens = await readTokensFile(this.path, this.fixed.length > 0);
      this.#tokens = [...this.fixed, ...tokens];
      this.logger.info({ tokens: tokens.map((t) => `${t.name}:${t.scope}`) }, `${SETTING} reloaded`);
    } catch (err) {
      this.logger.error(
        { err: { message: (err as Error).message } },
        `${SETTING} not reloaded, the previous tokens stay in force: ${(err as Error).message}`,
      );
    }
  }
}
