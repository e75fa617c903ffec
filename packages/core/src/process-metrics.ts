/**
 * How often, in ms, the daemons sample event-loop delay for Node's default process metrics
 * (prom-client's `eventLoopMonitoringPrecision`). prom-client's own default, 10 ms, is a timer a
 * hundred times a second, a large share of an idle master's CPU (the figures are in
 * docs/SCALING.md, "The event-loop delay sample"). prom-client starts the samples afresh at each
 * scrape, so at ten a second a 15 s scrape interval still rests the `nodejs_eventloop_lag_*`
 * percentiles on 150 samples.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * prom-client's default gauges whose names end in `_total`, a suffix Prometheus reserves for
 * counters (promtool rejects them). The daemons drop them; the same numbers remain, split by
 * type, in the unsuffixed gauges.
 */
export const NON_COUNTER_TOTALS: readonly string[] = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];
