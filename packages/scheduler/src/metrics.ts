import { EVENT_LOOP_SAMPLE_MS, NON_COUNTER_TOTALS } from '@maintd/core';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { JOB_BUCKETS } from './buckets.js';
import { KINDS, KIND_NAMES, type KindRegistry } from './kinds/index.js';
import { kindObservers } from './scheduler/kind-metrics.js';

/** Buckets of request-latency histograms (seconds). */
const REQUEST_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60];

/**
 * The master's Prometheus metrics (docs/ARCHITECTURE.md §3.5), on a registry of its own; a kind's own
 * metrics join the same registry from its spec (`KindSpec.metrics`). No per-target labels.
 */
export interface Metrics {
  readonly registry: Registry;
  readonly enqueued: Counter<'kind' | 'source'>;
  readonly queueDepth: Gauge<'kind'>;
  readonly tasks: Counter<'kind' | 'result'>;
  readonly taskDuration: Histogram<'kind'>;
  /** Slot seconds of the tasks this master finished, by kind and result: where its capacity went. */
  readonly busySeconds: Counter<'kind' | 'result'>;
  /** 1 while a kind's automatic work may start (no window, or inside it), 0 outside its window. */
  readonly windowOpen: Gauge<'kind'>;
  readonly cooldowns: Counter<'kind'>;
  readonly cooldownCleared: Counter<'kind' | 'reason'>;
  readonly guardOverflow: Counter<'kind'>;
  readonly sweepSkipped: Counter<'kind' | 'reason'>;
  /** Parks in force per kind, fleet-wide, as this master's watch sees them (set when scraped). */
  readonly parked: Gauge<'kind'>;
  readonly casConflicts: Counter<'op'>;
  /** 1 while this master holds its etcd session, else 0 (set when scraped). */
  readonly sessionHeld: Gauge;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route'>;
  /** Refused API requests by why: `missing`, `unknown` token, `scope` too narrow, `query_token`. */
  readonly apiAuthFailures: Counter<'reason'>;
}

/** The reasons of `master_api_auth_failures_total` (docs/ARCHITECTURE.md §3.4). */
const API_AUTH_FAILURE_REASONS = ['missing', 'unknown', 'scope', 'query_token'] as const;

/**
 * Creates the metric set on a fresh registry, with the metrics each kind of `kinds` (default the
 * shipped registry) declares, Node's default process metrics unless `processMetrics` is false
 * (simulations run several masters in one process), and `master_build_info` when `version` is given.
 */
export function createMetrics(
  options: { readonly processMetrics?: boolean; readonly version?: string; readonly kinds?: KindRegistry } = {},
): Metrics {
  const registry = new Registry();
  kindObservers(registry, options.kinds ?? KINDS);
  if (options.processMetrics ?? true) {
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    for (const name of NON_COUNTER_TOTALS) registry.removeSingleMetric(name);
  }
  const registers = [registry];
  const m: Metrics = {
    registry,
    enqueued: new Counter({
      name: 'master_task_enqueued_total',
      help: 'Tasks newly enqueued (dedupe hits excluded), by kind and source (sweep, manual).',
      labelNames: ['kind', 'source'],
      registers,
    }),
    queueDepth: new Gauge({
      name: 'master_task_queue_depth',
      help: 'Queued tasks by kind, as last seen by this master (absent until it has read them once).',
      labelNames: ['kind'],
      registers,
    }),
    tasks: new Counter({
      name: 'master_tasks_total',
      help: 'Tasks this master ran to an outcome, by kind and result (success, failed).',
      labelNames: ['kind', 'result'],
      registers,
    }),
    taskDuration: new Histogram({
      name: 'master_task_duration_seconds',
      help: 'Work time of tasks this master ran, by kind.',
      labelNames: ['kind'],
      buckets: JOB_BUCKETS,
      registers,
    }),
    busySeconds: new Counter({
      name: 'master_task_busy_seconds_total',
      help: 'Slot seconds (claim to finish) of the tasks this master finished, by kind and result (success, failed): the share of failed is capacity spent on failing work.',
      labelNames: ['kind', 'result'],
      registers,
    }),
    windowOpen: new Gauge({
      name: 'master_task_window_open',
      help: "1 while a kind's automatic work may start (it has no maintenance window, or is inside it), 0 outside its window (TASK_WINDOWS).",
      labelNames: ['kind'],
      registers,
    }),
    cooldowns: new Counter({
      name: 'master_task_cooldowns_total',
      help: 'Failures that left a target in a cooldown window (each new window counts), by kind.',
      labelNames: ['kind'],
      registers,
    }),
    cooldownCleared: new Counter({
      name: 'master_cooldown_cleared_total',
      help: 'Cooldown records deleted, by kind and reason (success, operator).',
      labelNames: ['kind', 'reason'],
      registers,
    }),
    guardOverflow: new Counter({
      name: 'master_cooldown_guard_overflow_total',
      help: 'Windows not opened because too much of the fleet was already cooling, by kind.',
      labelNames: ['kind'],
      registers,
    }),
    sweepSkipped: new Counter({
      name: 'master_sweep_skipped_total',
      help: 'Over-threshold stores a sweep did not enqueue, by kind and reason (parked, cooldown, active, window).',
      labelNames: ['kind', 'reason'],
      registers,
    }),
    parked: new Gauge({
      name: 'master_task_parked',
      help: 'Targets an operator parked (the sweeps skip them until released), by kind, fleet-wide as this master sees them.',
      labelNames: ['kind'],
      registers,
    }),
    casConflicts: new Counter({
      name: 'master_etcd_cas_conflicts_total',
      help: 'Compare-and-swap conflicts retried, by operation.',
      labelNames: ['op'],
      registers,
    }),
    sessionHeld: new Gauge({
      name: 'master_session_held',
      help: '1 while this master holds its etcd session (it sweeps, claims and runs tasks); 0 while it holds none (etcd unreachable from it, or its lease lapsed).',
      registers,
    }),
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests served, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency, by method and route template.',
      labelNames: ['method', 'route'],
      buckets: REQUEST_BUCKETS,
      registers,
    }),
    apiAuthFailures: new Counter({
      name: 'master_api_auth_failures_total',
      help: 'API requests refused for their credentials, by reason: missing, unknown (token), scope (too narrow), query_token (a token in the URL).',
      labelNames: ['reason'],
      registers,
    }),
  };
  if (options.version !== undefined) {
    new Gauge({
      name: 'master_build_info',
      help: 'Always 1: the maintd version and Node.js version this master runs, as labels.',
      labelNames: ['version', 'node'],
      registers,
    }).set({ version: options.version, node: process.versions.node }, 1);
  }
  // Zero series exist from the start, so rate() and alerts see the kinds before the first event.
  // Not the queue depth: before this master has read it, 0 would be a claim it cannot make.
  for (const reason of API_AUTH_FAILURE_REASONS) m.apiAuthFailures.inc({ reason }, 0);
  for (const kind of KIND_NAMES) {
    m.cooldowns.inc({ kind }, 0);
    m.guardOverflow.inc({ kind }, 0);
    m.parked.set({ kind }, 0);
    m.windowOpen.set({ kind }, 1);
    for (const result of ['success', 'failed']) {
      m.tasks.inc({ kind, result }, 0);
      m.busySeconds.inc({ kind, result }, 0);
    }
  }
  return m;
}
