export { type Change, type ClusterAggregate, aggregatePrefixes, applyChange, createAggregate } from './aggregate.js';
export { type AppDeps, createApp } from './app.js';
export type { ExporterConfig } from './config.js';
export { DEFAULT_PAGE_SIZE, type LoadOptions, loadAggregate } from './load.js';
export { type ExporterMetrics, type MetricsSource, createExporterMetrics } from './metrics.js';
export { TASK_STATES } from './record-fields.js';
export { type ClusterSummary, type KindSummary, summarize } from './summary.js';
export {
  ClusterWatcher,
  type ClusterWatcherOptions,
  SYNC_REASONS,
  type SyncInfo,
  type SyncReason,
  type WatcherStatus,
} from './watcher.js';
