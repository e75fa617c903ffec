/**
 * A full sync in a child process. The range read of 100k tasks allocates some 500 MB on its way
 * through the gRPC client, the Kv layer and the JSON decoding, for an aggregate of under 10 MB.
 * Read in the exporter itself, that burst grew V8's young generation to its maximum, promoted
 * page buffers that only a major collection frees (an idle exporter runs none), and left the
 * allocator's arenas full of freed chunks it never returns: the exporter settled some 60 MB above
 * what it holds. A worker thread sheds the V8 heap but not the arena (glibc keeps a finished
 * thread's arena for the next one). A process gives all of it back when it exits, and its gRPC
 * channel with it; the exporter receives the aggregate packed in two typed arrays and a few
 * small lists (see `packAggregate`).
 */
import { type ChildProcess, fork } from 'node:child_process';
import process from 'node:process';
import {
  ClosedError,
  EtcdKv,
  type EtcdKvOptions,
  type Kv,
  MaintdError,
  StoreAccessDeniedError,
  StoreUnavailableError,
  keysFor,
} from '@maintd/core';
import { type ClusterAggregate, type PackedAggregate, packAggregate, unpackAggregate } from './aggregate.js';
import { loadAggregate } from './load.js';
import type { AggregateLoader } from './watcher.js';

/** The argument that makes the binary a sync child (`main` checks it before anything else). */
export const SYNC_CHILD_ARG = '--internal-sync-child';

/** The request a sync child receives over its IPC channel. */
interface SyncRequest {
  readonly kv: EtcdKvOptions;
  readonly prefix: string | undefined;
  readonly pageSize: number | undefined;
}

/** The child's one answer. */
type SyncReply =
  | { readonly type: 'done'; readonly packed: PackedAggregate }
  | { readonly type: 'error'; readonly name: string; readonly message: string };

/** Options of {@link childLoader}. */
export interface ChildLoaderOptions {
  /** The binary's entry module, run with {@link SYNC_CHILD_ARG} (`bin/maintd-exporter.js`). */
  readonly entry: string;
  /** The etcd client options; the child opens a client of its own with them. */
  readonly kv: EtcdKvOptions;
  /**
   * The exporter's own client, asked for the revision before a child starts: while etcd is down
   * a sync fails there, with the error the watcher expects, and no process is started for it.
   */
  readonly probe: Kv;
  /** Keys per range page (default that of `loadAggregate`). */
  readonly pageSize?: number;
}

/**
 * An {@link AggregateLoader} that reads each full sync in a new child process (see the module
 * comment). Failures arrive as the errors the watcher tells apart (etcd unavailable, access
 * denied); an aborted load kills the child.
 */
export function childLoader(options: ChildLoaderOptions): AggregateLoader {
  return async (prefix, signal) => {
    await options.probe.revision(`${keysFor(prefix).prefix}/`);
    signal.throwIfAborted();
    const child: ChildProcess = fork(options.entry, [SYNC_CHILD_ARG], {
      // Typed arrays cross as typed arrays, not as JSON.
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    return new Promise<ClusterAggregate>((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        fn();
      };
      const onAbort = (): void => {
        settle(() => reject(signal.reason as Error));
        child.kill('SIGTERM');
      };
      signal.addEventListener('abort', onAbort, { once: true });
      child.once('message', (reply: SyncReply) => {
        if (reply.type === 'done') settle(() => resolve(unpackAggregate(reply.packed)));
        else settle(() => reject(reviveError(reply.name, reply.message)));
      });
      child.once('error', (err) =>
        settle(() =>
          reject(new StoreUnavailableError(`cannot start the sync process: ${err.message}`, { cause: err })),
        ),
      );
      child.once('exit', (code, sig) =>
        settle(() =>
          reject(new StoreUnavailableError(`the sync process exited (${sig ?? `code ${code}`}) before answering`)),
        ),
      );
      const request: SyncRequest = { kv: options.kv, prefix, pageSize: options.pageSize };
      child.send(request);
    });
  };
}

/**
 * The body of a sync child: reads one request from the IPC channel, answers with the packed
 * aggregate (or the error), and exits. It exits too if the exporter goes away first.
 */
export function runSyncChild(): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new MaintdError(`${SYNC_CHILD_ARG} is for the exporter's own sync process`);
  process.once('disconnect', () => process.exit(1));
  return new Promise((done) => {
    process.once('message', (request: SyncRequest) => {
      void answer(request).then((reply) => {
        send(reply, undefined, undefined, () => {
          process.disconnect();
          done();
        });
      });
    });
  });
}

async function answer(request: SyncRequest): Promise<SyncReply> {
  const kv = new EtcdKv(withBuffers(request.kv));
  try {
    const agg = await loadAggregate(
      kv,
      request.prefix,
      request.pageSize !== undefined ? { pageSize: request.pageSize } : {},
    );
    return { type: 'done', packed: packAggregate(agg) };
  } catch (err) {
    return {
      type: 'error',
      name: err instanceof Error ? err.name : 'Error',
      message: err instanceof Error ? err.message : String(err),
    };
  } finally {
    await kv.close().catch(() => undefined);
  }
}

/** The TLS PEM contents cross the channel as Uint8Arrays; the gRPC client wants Buffers. */
function withBuffers(options: EtcdKvOptions): EtcdKvOptions {
  const tls = options.tls;
  if (!tls) return options;
  const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return {
    ...options,
    tls: { ca: buf(tls.ca), ...(tls.cert ? { cert: buf(tls.cert) } : {}), ...(tls.key ? { key: buf(tls.key) } : {}) },
  };
}

/** The error classes the watcher tells apart, by name; anything else is etcd being unavailable. */
function reviveError(name: string, message: string): Error {
  if (name === 'StoreAccessDeniedError') return new StoreAccessDeniedError(message);
  if (name === 'ClosedError') return new ClosedError(message);
  return new StoreUnavailableError(message);
}
