import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import {
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  ExponentialBackoff,
  circuitBreaker,
  handleWhen,
  isBrokenCircuitError,
  retry,
} from 'cockatiel';
import {
  Etcd3,
  EtcdAuthenticationFailedError,
  EtcdLeaseInvalidError,
  EtcdPermissionDeniedError,
  GRPCDeadlineExceededError,
  GRPCUnavailableError,
  GRPCCancelledError,
  ClientClosedError,
  type IOptions,
  type IKeyValue,
  type ICompare,
  type IRequestOp,
  type IResponseOp,
  type Watcher,
  isRecoverableError,
} from 'etcd3';
import { wallClockDeadline, withWallClockBound } from '../clock.js';
import {
  LeaseNotFoundError,
  MaintdError,
  StoreAccessDeniedError,
  StoreFullError,
  StoreUnavailableError,
  WatchCompactedError,
} from '../errors.js';
import { cleanGrpcMessage } from './grpc-message.js';
import type {
  Compare,
  GrantOptions,
  KeyValue,
  Kv,
  Lease,
  RangeOptions,
  RangeResult,
  TxnOp,
  TxnOpResult,
  TxnResult,
  Watch,
  WatchEvent,
  WatchOptions,
} from './port.js';

/** Connection settings of {@link EtcdKv}. */
export interface EtcdKvOptions {
  /** Client URLs, e.g. `http://127.0.0.1:2379`. */
  readonly endpoints: readonly string[];
  /** Username/password authentication (set both or neither). */
  readonly auth?: { readonly username: string; readonly password: string };
  /** TLS: PEM contents of the CA, and optionally of a client certificate and key. */
  readonly tls?: { readonly ca: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
  /** Deadline of every unary call, in ms (default 5000). A hung etcd fails calls, never hangs them. */
  readonly callTimeoutMs?: number;
  /** How long a host's open circuit stays open before a trial call, in ms (default 500). */
  readonly halfOpenAfterMs?: number;
}

/**
 * The Kv port over a real etcd (v3 API, through the `etcd3` client). Every unary call carries a
 * deadline; transport failures, deadlines and the client's open circuit all surface as one
 * {@link StoreUnavailableError}, so callers handle "etcd is not answering" in one place.
 */
export class EtcdKv implements Kv {
  readonly #callTimeoutMs: number;
  /** What the last call that reached no etcd found, for the calls an open circuit then refuses. */
  #lastUnavailable: string | undefined;
  readonly #client: Etcd3;
  readonly #config: IOptions;
  /**
   * The client watches run on, apart from the one for calls and leases: etcd3 re-authenticates
   * a call refused for a stale auth token, but a watch stream reconnects with the token it has,
   * and etcd (which keeps simple tokens in memory) refuses every watch on it after a restart. So
   * a watch refused for its token replaces this client. Created at the first watch.
   */
  #watchClient: Etcd3 | undefined;
  readonly #leases = new Set<{ release(): void }>();
  /** Live watches, with their client and how to tell their owners they are gone. */
  readonly #watchers = new Map<Watcher, { readonly client: Etcd3; readonly lose: (err: Error) => void }>();

  constructor(options: EtcdKvOptions) {
    if (options.endpoints.length === 0) throw new MaintdError('EtcdKv needs at least one endpoint');
    const callTimeoutMs = options.callTimeoutMs ?? 5000;
    this.#callTimeoutMs = callTimeoutMs;
    const halfOpenAfter = options.halfOpenAfterMs ?? 500;
    const tls = options.tls;
    const config: IOptions = {
      hosts: [...options.endpoints],
      // Whole-prefix pages (10k records) exceed grpc-js's 4 MB default.
      grpcOptions: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
      dialTimeout: callTimeoutMs,
      ...(options.auth
        ? {
            auth: {
              username: options.auth.username,
              password: options.auth.password,
              callOptions: () => ({ deadline: wallClockDeadline(callTimeoutMs) }),
            },
          }
        : {}),
      ...(tls
        ? {
            credentials: {
              rootCertificate: tls.ca,
              ...(tls.key ? { privateKey: tls.key } : {}),
              ...(tls.cert ? { certChain: tls.cert } : {}),
            },
          }
        : {}),
      // Streams (watch, keepalive) live long; only unary calls get a deadline.
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: wallClockDeadline(callTimeoutMs) }),
      faultHandling: {
        host: () =>
          halfOpenPassThrough(
            // etcd out of space answers every write with RESOURCE_EXHAUSTED, which etcd3 counts as
            // recoverable: every three writes would open the breaker and refuse, half a second at a
            // time, the reads that still work (the masters' API, the exporter).
            circuitBreaker(
              handleWhen((e) => isRecoverableError(e) && !isNoSpace(e)),
              {
                halfOpenAfter,
                breaker: new ConsecutiveBreaker(3),
              },
            ),
          ),
        // Retry only when the request cannot have reached etcd: a retried deadline could apply a
        // write twice, and a retried CAS would misreport its own success as a conflict.
        global: retry(
          handleWhen((e) => e instanceof GRPCUnavailableError),
          { maxAttempts: 1 },
        ),
        // etcd3's default lets a broken watch stream wait up to 30 s between reconnects, and it
        // reports no error meanwhile: after a partition heals, every watch (the scheduler's queue
        // wake-ups, the API's events) would lag that long. Reconnect within 2 s instead.
        // (etcd3 types this as a backoff instance but calls `.next()` on it, as on its own default,
        // a factory: the cast matches what it does.)
        watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 2000 }) as unknown as NonNullable<
          IOptions['faultHandling']
        >['watchBackoff'],
      },
    };
    this.#config = config;
    this.#client = new Etcd3(config);
  }

  /** {@inheritDoc Kv.get} */
  async get(key: string): Promise<KeyValue | undefined> {
    const res = await this.#call(() => this.#client.kv.range({ key: Buffer.from(key) }));
    const kv = res.kvs[0];
    return kv ? fromEtcd(kv) : undefined;
  }

  /** {@inheritDoc Kv.range} */
  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    const p = Buffer.from(prefix);
    let key = p;
    let end = prefixEnd(p);
    if (options.fromKey !== undefined) {
      if (options.reverse) end = Buffer.concat([Buffer.from(options.fromKey), Buffer.from([0])]);
      else key = Buffer.from(options.fromKey);
    }
    if (options.toKey !== undefined && !options.reverse && Buffer.compare(Buffer.from(options.toKey), end) < 0) {
      end = Buffer.from(options.toKey);
    }
    const res = await this.#call(() =>
      this.#client.kv.range({
        key,
        range_end: end,
        ...(options.limit ? { limit: options.limit } : {}),
        ...(options.keysOnly ? { keys_only: true } : {}),
        ...(options.countOnly ? { count_only: true } : {}),
        ...(options.reverse ? { sort_order: 'Descend' as const, sort_target: 'Key' as const } : {}),
      }),
    );
    return {
      kvs: (res.kvs ?? []).map((kv) => fromEtcd(kv, options.keysOnly)),
      count: Number(res.count),
      more: Boolean(res.more),
      revision: Number(res.header.revision),
    };
  }

  /** {@inheritDoc Kv.txn} */
  async txn(
    compares: readonly Compare[],
    success: readonly TxnOp[],
    failure: readonly TxnOp[] = [],
  ): Promise<TxnResult> {
    const res = await this.#call(() =>
      this.#client.kv.txn({
        compare: compares.map(toCompare),
        success: success.map(toRequestOp),
        failure: failure.map(toRequestOp),
      }),
    );
    const ops = res.succeeded ? success : failure;
    return {
      succeeded: Boolean(res.succeeded),
      revision: Number(res.header.revision),
      results: ops.map((op, i) => fromResponseOp(op, res.responses?.[i])),
    };
  }

  /** {@inheritDoc Kv.put} */
  async put(key: string, value: string, options: { readonly lease?: string } = {}): Promise<{ revision: number }> {
    const res = await this.#call(() =>
      this.#client.kv.put({
        key: Buffer.from(key),
        value: Buffer.from(value),
        ...(options.lease ? { lease: options.lease } : {}),
      }),
    );
    return { revision: Number(res.header.revision) };
  }

  /** {@inheritDoc Kv.delete} */
  async delete(key: string): Promise<number> {
    const res = await this.#call(() => this.#client.kv.deleteRange({ key: Buffer.from(key) }));
    return Number(res.deleted);
  }

  /** {@inheritDoc Kv.deletePrefix} */
  async deletePrefix(prefix: string): Promise<number> {
    const p = Buffer.from(prefix);
    const res = await this.#call(() => this.#client.kv.deleteRange({ key: p, range_end: prefixEnd(p) }));
    return Number(res.deleted);
  }

  /** {@inheritDoc Kv.grant} */
  async grant(ttlSecs: number, options: GrantOptions = {}): Promise<Lease> {
    if (!Number.isInteger(ttlSecs) || ttlSecs < 1) {
      throw new MaintdError(`lease TTL must be a whole number of seconds ≥ 1, got ${ttlSecs}`);
    }
    const lease = this.#client.lease(ttlSecs, { autoKeepAlive: options.keepAlive ?? true });
    const lost = new AbortController();
    lease.on('lost', (err) => lost.abort(new LeaseNotFoundError('lease lost', { cause: err })));
    const id = await this.#call(() => lease.grant());
    const handle = { release: () => lease.release() };
    this.#leases.add(handle);
    return {
      id,
      ttlSecs,
      lost: lost.signal,
      revoke: async () => {
        this.#leases.delete(handle);
        try {
          await this.#call(() => lease.revoke());
        } catch (err) {
          if (!(err instanceof LeaseNotFoundError)) throw err;
        }
      },
      release: () => {
        this.#leases.delete(handle);
        lease.release();
      },
    };
  }

  /** {@inheritDoc Kv.watch} */
  async watch(
    prefix: string,
    listener: (events: readonly WatchEvent[]) => void,
    options: WatchOptions = {},
  ): Promise<Watch> {
    const client = (this.#watchClient ??= new Etcd3(this.#config));
    let builder = client.watch().prefix(prefix);
    if (options.fromRevision !== undefined) builder = builder.startRevision(String(options.fromRevision));
    let watcher: Watcher;
    try {
      watcher = await this.#call(() => builder.create());
    } catch (err) {
      // A create that never answered may be stuck behind one etcd refused (etcd3 creates a
      // stream's watches one at a time): the next attempt must not queue behind it too.
      if (/no answer within/.test((err as Error).message)) {
        this.#replaceWatchClient(client, new StoreUnavailableError('watch lost: its etcd client stopped answering'));
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
      if (refused && this.#watchClient === client) this.#watchClient = undefined;
      lose(
        compact
          ? new WatchCompactedError(`watch on '${prefix}' failed: ${err.message}`, { cause: err })
          : new StoreUnavailableError(`watch on '${prefix}' failed: ${cleanGrpcMessage(err.message)}`, { cause: err }),
      );
      if (refused) this.#replaceWatchClient(client, staleToken());
    });
    // A stream etcd refuses for its token may only keep failing: etcd3 retries it with that token.
    watcher.on('disconnected', (err: Error | undefined) => {
      if (err !== undefined && /invalid auth token/i.test(err.message)) this.#replaceWatchClient(client, staleToken());
    });
    return {
      close: async () => {
        closed = true;
        this.#watchers.delete(watcher);
        if (!lost) await this.#cancel(watcher);
      },
    };
  }

  /**
   * Drops a watch client whose stream etcd refuses for its token (or whose watch creation went
   * unanswered), telling the owners of its watches they are gone: etcd3 re-creates a stream's
   * watches one at a time, and the first one refused leaves the rest waiting for good, delivering
   * nothing and reporting nothing. Their owners watch again, on a new client with a fresh token.
   */
  #replaceWatchClient(stale: Etcd3, lost: Error): void {
    if (this.#watchClient === stale) this.#watchClient = undefined;
    for (const [, w] of this.#watchers) if (w.client === stale) w.lose(lost);
    // Idempotent: every watch of a stale client may report it.
    stale.close();
  }

  /** {@inheritDoc Kv.revision} */
  async revision(probeKey?: string): Promise<number> {
    const key = probeKey === undefined ? Buffer.from([0]) : Buffer.from(probeKey);
    const res = await this.#call(() => this.#client.kv.range({ key, count_only: true }));
    return Number(res.header.revision);
  }

  /** Compacts etcd's history up to `revision` (for tests of watch re-sync). */
  async compact(revision: number): Promise<void> {
    await this.#call(() => this.#client.kv.compact({ revision, physical: true }));
  }

  /** {@inheritDoc Kv.close} */
  async close(): Promise<void> {
    for (const l of this.#leases) l.release();
    this.#leases.clear();
    await Promise.all([...this.#watchers.keys()].map((w) => this.#cancel(w)));
    this.#watchers.clear();
    this.#watchClient?.close();
    this.#client.close();
  }

  /**
   * Cancels a watch, waiting at most one call timeout: etcd3 waits for etcd's answer to the
   * cancel request with no bound of its own, so a cancel never answered (a stream broken after
   * the request went out) would hang a shutdown for good. A watch given up on delivers nothing
   * more; closing the client ends its stream.
   */
  async #cancel(watcher: Watcher): Promise<void> {
    await withWallClockBound(watcher.cancel(), this.#callTimeoutMs, () => new Error('cancel timed out')).catch(
      () => undefined,
    );
  }

  async #call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      // The gRPC deadline bounds one attempt; a waiting half-open breaker per endpoint and the
      // retry of a channel reset could stack several. The caller gets one answer within the
      // deadline (plus a moment for the attempt's own deadline to win when it is the cause).
      return await withWallClockBound(
        fn(),
        this.#callTimeoutMs + CALL_BOUND_SLACK_MS,
        () => new StoreUnavailableError(`etcd unavailable: no answer within ${this.#callTimeoutMs} ms`),
      );
    } catch (err) {
      // An open circuit refuses calls without trying them, and its error says only that: name
      // what the attempts that opened it found instead.
      if (isBrokenCircuitError(err)) {
        const why = this.#lastUnavailable ?? 'repeated failures';
        throw new StoreUnavailableError(`etcd unavailable: ${why} (circuit open)`, { cause: err });
      }
      const mapped = mapError(err);
      if (mapped instanceof StoreUnavailableError)
        this.#lastUnavailable = mapped.message.replace(/^etcd unavailable: /, '');
      throw mapped;
    }
  }
}

/** Why the watches end of a client whose auth token etcd no longer takes. */
function staleToken(): StoreUnavailableError {
  return new StoreUnavailableError("watch lost: etcd no longer honours the client's auth token");
}

/**
 * An endpoint's circuit breaker that lets calls through while its half-open trial runs, instead
 * of making them wait for the trial: etcd3 retries a call refused for a stale auth token from
 * inside that call, so a trial refused that way (the first call after etcd restarted, with auth
 * on) waited for itself, and every call after it for that trial, until the process restarted.
 */
function halfOpenPassThrough(breaker: CircuitBreakerPolicy): CircuitBreakerPolicy {
  const execute: CircuitBreakerPolicy['execute'] = (fn, signal) =>
    breaker.state === CircuitState.HalfOpen
      ? Promise.resolve().then(() => fn({ signal: signal ?? new AbortController().signal }))
      : breaker.execute(fn, signal);
  return new Proxy(breaker, {
    get(target, prop) {
      if (prop === 'execute') return execute;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** How long past its deadline a call may take before the overall bound answers instead. */
const CALL_BOUND_SLACK_MS = 250;

/** RESOURCE_EXHAUSTED with etcd's ErrNoSpace: the space quota is reached and the NOSPACE alarm raised. */
function isNoSpace(err: Error): boolean {
  return /database space exceeded/i.test(err.message);
}

/** Maps the etcd3 client's many failure shapes onto maintd's error hierarchy. */
function mapError(err: unknown): Error {
  if (err instanceof MaintdError) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  if (err instanceof EtcdLeaseInvalidError || /lease not found/i.test(e.message)) {
    return new LeaseNotFoundError(e.message, { cause: err });
  }
  if (err instanceof EtcdAuthenticationFailedError) {
    return new StoreAccessDeniedError(`etcd refused the credentials: ${cleanGrpcMessage(e.message)}`, { cause: err });
  }
  // The credentials were accepted: the user's roles do not grant the keys. Every key maintd
  // touches lies under its prefix, and session leases need no permission.
  if (err instanceof EtcdPermissionDeniedError) {
    return new StoreAccessDeniedError(
      `etcd denied access to the keys under the prefix: ${cleanGrpcMessage(e.message)} (check that the etcd role of ETCD_USERNAME covers ETCD_PREFIX)`,
      { cause: err },
    );
  }
  if (isNoSpace(e)) {
    return new StoreFullError(
      `etcd is out of space (NOSPACE alarm: ${cleanGrpcMessage(e.message)}) and refuses writes until it is ` +
        'compacted, defragmented and the alarm disarmed',
      { cause: err },
    );
  }
  if (
    isBrokenCircuitError(err) ||
    err instanceof GRPCDeadlineExceededError ||
    err instanceof GRPCUnavailableError ||
    err instanceof GRPCCancelledError ||
    err instanceof ClientClosedError ||
    isRecoverableError(e)
  ) {
    return new StoreUnavailableError(`etcd unavailable: ${cleanGrpcMessage(e.message)}`, { cause: err });
  }
  return new MaintdError(`etcd error: ${cleanGrpcMessage(e.message)}`, { cause: err });
}

/** The smallest key greater than every key that starts with `prefix`. */
function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

function fromEtcd(kv: IKeyValue, keysOnly = false): KeyValue {
  return {
    key: kv.key.toString(),
    value: keysOnly ? '' : kv.value.toString(),
    createRevision: Number(kv.create_revision),
    modRevision: Number(kv.mod_revision),
    version: Number(kv.version),
    lease: kv.lease && kv.lease !== '0' ? kv.lease : undefined,
  };
}

const RESULT = { '==': 'Equal', '!=': 'NotEqual', '>': 'Greater', '<': 'Less' } as const;

function toCompare(c: Compare): ICompare {
  const key = Buffer.from(c.key);
  const result = RESULT[c.op];
  switch (c.target) {
    case 'value':
      return { key, result, target: 'Value', value: Buffer.from(c.value) };
    case 'version':
      return { key, result, target: 'Version', version: c.value };
    case 'createRevision':
      return { key, result, target: 'Create', create_revision: c.value };
    case 'modRevision':
      return { key, result, target: 'Mod', mod_revision: c.value };
  }
}

function toRequestOp(op: TxnOp): IRequestOp {
  switch (op.type) {
    case 'put':
      return {
        request_put: {
          key: Buffer.from(op.key),
          value: Buffer.from(op.value),
          ...(op.lease ? { lease: op.lease } : {}),
        },
      };
    case 'delete':
      return { request_delete_range: { key: Buffer.from(op.key) } };
    case 'get':
      return { request_range: { key: Buffer.from(op.key) } };
  }
}

function fromResponseOp(op: TxnOp, res: IResponseOp | undefined): TxnOpResult {
  switch (op.type) {
    case 'put':
      return { type: 'put' };
    case 'delete':
      return { type: 'delete', deleted: Number(res?.response_delete_range?.deleted ?? 0) };
    case 'get': {
      const kv = res?.response_range?.kvs?.[0];
      return { type: 'get', kv: kv ? fromEtcd(kv) : undefined };
    }
  }
}

/** etcd connection settings as operators give them: endpoints, credentials, and PEM file paths. */
export interface EtcdConnectionSettings {
  /** Client URLs. */
  readonly endpoints: readonly string[];
  /** Username (with `password`; both or neither). */
  readonly username?: string | undefined;
  /** Password (with `username`). */
  readonly password?: string | undefined;
  /** Path of the CA certificate (PEM): enables TLS. */
  readonly caCert?: string | undefined;
  /** Path of the client certificate (PEM), with `clientKey`. */
  readonly clientCert?: string | undefined;
  /** Path of the client key (PEM). */
  readonly clientKey?: string | undefined;
}

/**
 * {@link EtcdKvOptions} from connection settings, reading the PEM files. A file that cannot be
 * read fails with a message naming its setting (`ETCD_CA_CERT`, `ETCD_CLIENT_CERT`,
 * `ETCD_CLIENT_KEY`) and the path.
 */
export async function etcdKvOptions(settings: EtcdConnectionSettings): Promise<EtcdKvOptions> {
  const read = async (path: string, setting: string): Promise<Buffer> => {
    try {
      return await readFile(path);
    } catch (err) {
      throw new MaintdError(
        `${setting}: cannot read '${path}': ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        {
          cause: err,
        },
      );
    }
  };
  // gRPC silently falls back to the system CAs for a file that is not PEM: check each here.
  const parse = (buf: Buffer, path: string, setting: string, what: 'certificate' | 'key'): Buffer => {
    try {
      if (what === 'key') createPrivateKey(buf);
      else new X509Certificate(buf);
      return buf;
    } catch (err) {
      throw new MaintdError(`${setting}: '${path}' is not a PEM ${what}`, { cause: err });
    }
  };
  const file = async (path: string, setting: string, what: 'certificate' | 'key'): Promise<Buffer> =>
    parse(await read(path, setting), path, setting, what);
  // Given credentials, the etcd client speaks TLS to every endpoint, whatever its scheme says.
  const plain = settings.caCert ? settings.endpoints.find((e) => /^http:\/\//i.test(e)) : undefined;
  if (plain !== undefined) {
    throw new MaintdError(`ETCD_ENDPOINTS: '${plain}' is plain http://, but ETCD_CA_CERT is set: use https://`);
  }
  const tls = settings.caCert
    ? {
        ca: await file(settings.caCert, 'ETCD_CA_CERT', 'certificate'),
        ...(settings.clientCert ? { cert: await file(settings.clientCert, 'ETCD_CLIENT_CERT', 'certificate') } : {}),
        ...(settings.clientKey ? { key: await file(settings.clientKey, 'ETCD_CLIENT_KEY', 'key') } : {}),
      }
    : undefined;
  return {
    endpoints: settings.endpoints,
    ...(settings.username && settings.password
      ? { auth: { username: settings.username, password: settings.password } }
      : {}),
    ...(tls ? { tls } : {}),
  };
}

/**
 * Why a TLS connection to etcd fails, in words an operator can act on, naming the setting to
 * check — or `undefined` when the handshake succeeds or the endpoint does not answer at all.
 * gRPC reports every TLS failure as a bare `UNAVAILABLE: No connection established`; this
 * repeats the handshake with `node:tls` (and one request, since with TLS 1.3 the server rejects
 * a client certificate only after the client's side of the handshake) to learn the reason.
 */
export async function diagnoseEtcdTls(options: EtcdKvOptions, timeoutMs = 3000): Promise<string | undefined> {
  const tls = options.tls;
  // Without ETCD_CA_CERT only https:// endpoints speak TLS, checked against the system's CAs.
  const endpoints = tls ? options.endpoints : options.endpoints.filter((e) => /^https:\/\//i.test(e));
  for (const endpoint of endpoints) {
    let url: URL;
    try {
      url = new URL(endpoint.includes('://') ? endpoint : `https://${endpoint}`);
    } catch {
      continue;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || 2379);
    let socket: TLSSocket | undefined;
    const probe = new Promise<string | undefined>((resolve) => {
      try {
        socket = tlsConnect({
          host,
          port,
          ...(tls ? { ca: tls.ca } : {}),
          ...(tls?.cert ? { cert: tls.cert } : {}),
          ...(tls?.key ? { key: tls.key } : {}),
          // An IP address is not a valid SNI name (Node warns); the certificate check still applies.
          ...(isIP(host) ? {} : { servername: host }),
          ALPNProtocols: ['http/1.1'],
        });
      } catch (err) {
        // Unusable PEM content fails before any connection.
        resolve(describeTlsError(endpoint, err as NodeJS.ErrnoException, tls !== undefined));
        return;
      }
      const s = socket;
      s.once('secureConnect', () => {
        s.write(`GET /version HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      });
      s.once('data', () => resolve(undefined));
      s.once('error', (err: NodeJS.ErrnoException) => resolve(describeTlsError(endpoint, err, tls !== undefined)));
    });
    // An endpoint that never answers says nothing about TLS.
    const reason = await withWallClockBound(probe, timeoutMs, () => new Error('no answer')).catch(() => undefined);
    socket?.destroy();
    if (reason) return reason;
  }
  return undefined;
}

function describeTlsError(endpoint: string, err: NodeJS.ErrnoException, caSet: boolean): string | undefined {
  const code = err.code ?? '';
  const text = `${code ? `${code}: ` : ''}${err.message}`;
  if (['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ETIMEDOUT', 'ENOTFOUND'].includes(code)) return undefined;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `etcd at ${endpoint}: its certificate does not name this host (${text})`;
  if (/wrong version number|packet length too long|http request/i.test(err.message))
    return `etcd at ${endpoint} does not speak TLS (${text}): use an http:// endpoint or unset ETCD_CA_CERT`;
  if (
    /alert (bad certificate|certificate required|unknown ca|certificate unknown|handshake failure)/i.test(err.message)
  )
    return `etcd at ${endpoint} rejected the client certificate; check ETCD_CLIENT_CERT and ETCD_CLIENT_KEY (${text})`;
  if (/CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code))
    return caSet
      ? `the certificate of etcd at ${endpoint} is not trusted by ETCD_CA_CERT (${text})`
      : `the certificate of etcd at ${endpoint} is not trusted by the system's CAs (${text}): set ETCD_CA_CERT to the CA that signed it`;
  if (/PEM|key values mismatch|NO_START_LINE|bad decrypt/i.test(err.message))
    return `cannot use the TLS files for etcd (${text}); check ETCD_CA_CERT, ETCD_CLIENT_CERT and ETCD_CLIENT_KEY`;
  return `TLS with etcd at ${endpoint} failed: ${text}`;
}
