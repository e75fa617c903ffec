export {
  type Change,
  type ClusterAggregate,
  type ClusterSummary,
  type KindSummary,
  TASK_STATES,
  aggregatePrefixes,
  applyChange,
  createAggregate,
  summarize,
} from './aggregate.js';
export { type AppDeps, createApp } from './app.js';
export type { ExporterConfig, LogLevel } from './config.js';
export { DEFAULT_PAGE_SIZE, type LoadOptions, loadAggregate } from './load.js';
export { type ExporterMetrics, type MetricsSource, createExporterMetrics } from './metrics.js';
export {
  type AggregateLoader,
  ClusterWatcher,
  type ClusterWatcherOptions,
  SYNC_REASONS,
  type SyncInfo,
  type SyncReason,
  type WatcherStatus,
} from './watcher.js';
