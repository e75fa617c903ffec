import { Etcd3, type IOptions, type Watcher } from 'etcd3';
import { withWallClockBound } from '../clock.js';
import { StoreUnavailableError, WatchCompactedError } from '../errors.js';
import type { EtcdCalls } from './etcd-calls.js';
import { cleanGrpcMessage } from './grpc-message.js';
import type { Watch, WatchEvent, WatchOptions } from './port.js';

/**
 * The watches of one {@link EtcdKv}, on an etcd3 client of their own apart from the one for calls
 * and leases: etcd3 re-authenticates a call refused for a stale auth token, but a watch stream
 * reconnects with the token it has, and etcd (which keeps simple tokens in memory) refuses every
 * watch on it after a restart. So a watch refused for its token replaces this client.
 */
export class EtcdWatches {
  readonly #config: IOptions;
  readonly #calls: EtcdCalls;
  /** Created at the first watch, and again after a stale one is dropped. */
  #client: Etcd3 | undefined;
  /** Live watches, with their client and how to tell their owners they are gone. */
  readonly #watchers = new Map<Watcher, { readonly client: Etcd3; readonly lose: (err: Error) => void }>();

  constructor(config: IOptions, calls: EtcdCalls) {
    this.#config = config;
    this.#calls = calls;
  }

  /** {@inheritDoc Kv.watch} */
  async watch(
    prefix: string,
    listener: (events: readonly WatchEvent[]) => void,
    options: WatchOptions = {},
  ): Promise<Watch> {
    const client = (this.#client ??= new Etcd3(this.#config));
    let builder = client.watch().prefix(prefix);
    if (options.fromRevision !== undefined) builder = builder.startRevision(String(options.fromRevision));
    let watcher: Watcher;
    try {
      watcher = await this.#calls.run(() => builder.create());
    } catch (err) {
      // A create that never answered may be stuck behind one etcd refused (etcd3 creates a
      // stream's watches one at a time): the next attempt must not queue behind it too.
      if (/no answer within/.test((err as Error).message)) {
        this.#replaceClient(client, new StoreUnavailableError('watch lost: its etcd client stopped answering'));
      }
      throw err;
    }
    let closed = false;
    // A lost watch has nothing left to cancel: etcd ended it, or its client is closed. etcd3 would
    // wait for a cancel's answer that never comes, and its owner's close() with it (a call timeout).
    let lost = false;
    const lose = (err: Error): void => {
      lost = true;
      this.#watchers.delete(watcher);
      if (closed) return;
      closed = true;
      options.onError?.(err);
    };
    this.#watchers.set(watcher, { client, lose });
    watcher.on('data', (res) => {
      if (closed) return;
      const events: WatchEvent[] = (res.events ?? []).map((e) => ({
        type: e.type === 'Put' ? 'put' : 'delete',
        key: e.kv.key.toString(),
        value: e.type === 'Put' ? e.kv.value.toString() : '',
        modRevision: Number(e.kv.mod_revision),
      }));
      if (events.length > 0) listener(events);
    });
    watcher.on('error', (err) => {
      // etcd cancels a watch on a compacted revision with an empty reason (3.4), or says so (3.5+);
      // etcd3 surfaces only the reason text.
      const compact = /compacted/i.test(err.message) || /^Watcher canceled:\s*$/.test(err.message);
      const refused = /invalid auth token/i.test(err.message);
      // Before the owner hears of it: an owner that watches again at once must get a new client.
      if (refused && this.#client === client) this.#client = undefined;
      lose(
        compact
          ? new WatchCompactedError(`watch on '${prefix}' failed: ${err.message}`, { cause: err })
          : new StoreUnavailableError(`watch on '${prefix}' failed: ${cleanGrpcMessage(err.message)}`, { cause: err }),
      );
      if (refused) this.#replaceClient(client, staleToken());
    });
    // A stream etcd refuses for its token may only keep failing: etcd3 retries it with that token.
    watcher.on('disconnected', (err: Error | undefined) => {
      if (err !== undefined && /invalid auth token/i.test(err.message)) this.#replaceClient(client, staleToken());
    });
    return {
      close: async () => {
        closed = true;
        this.#watchers.delete(watcher);
        if (!lost) await this.#cancel(watcher);
      },
    };
  }

  /** Cancels every watch and closes their client. */
  async close(): Promise<void> {
    await Promise.all([...this.#watchers.keys()].map((w) => this.#cancel(w)));
    this.#watchers.clear();
    this.#client?.close();
  }

  /**
   * Drops a watch client whose stream etcd refuses for its token (or whose watch creation went
   * unanswered), telling the owners of its watches they are gone: etcd3 re-creates a stream's
   * watches one at a time, and the first one refused leaves the rest waiting for good, delivering
   * nothing and reporting nothing. Their owners watch again, on a new client with a fresh token.
   */
  #replaceClient(stale: Etcd3, lost: Error): void {
    if (this.#client === stale) this.#client = undefined;
    for (const [, w] of this.#watchers) if (w.client === stale) w.lose(lost);
    // Idempotent: every watch of a stale client may report it.
    stale.close();
  }

  /**
   * Cancels a watch, waiting at most one call timeout: etcd3 waits for etcd's answer to the
   * cancel request with no bound of its own, so a cancel never answered (a stream broken after
   * the request went out) would hang a shutdown for good. A watch given up on delivers nothing
   * more; closing the client ends its stream.
   */
  async #cancel(watcher: Watcher): Promise<void> {
    await withWallClockBound(watcher.cancel(), this.#calls.timeoutMs, () => new Error('cancel timed out')).catch(
      () => undefined,
    );
  }
}

/** Why the watches end of a client whose auth token etcd no longer takes. */
function staleToken(): StoreUnavailableError {
  return new StoreUnavailableError("watch lost: etcd no longer honours the client's auth token");
}
