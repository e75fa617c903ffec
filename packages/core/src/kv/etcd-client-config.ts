import {
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  ExponentialBackoff,
  circuitBreaker,
  handleWhen,
  retry,
} from 'cockatiel';
import { GRPCUnavailableError, type IOptions, isRecoverableError } from 'etcd3';
import { wallClockDeadline } from '../clock.js';
import { isNoSpace } from './etcd-errors.js';
import type { EtcdKvOptions } from './etcd-options.js';

/** Deadline of every unary call when the options name none, in ms. */
export const DEFAULT_CALL_TIMEOUT_MS = 5000;

/**
 * The etcd3 client's configuration for {@link EtcdKvOptions}: deadlines, per-endpoint circuit
 * breakers, retries and watch reconnects, chosen so that an etcd that does not answer fails
 * calls quickly and a healed one is used again at once.
 */
export function etcdClientConfig(options: EtcdKvOptions): IOptions {
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const halfOpenAfter = options.halfOpenAfterMs ?? 500;
  const tls = options.tls;
  return {
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
