export type { Config, SweepConfig } from './config.js';
export { type ExecutorDeps, type WorkerAttempt } from './executor.js';
export { FEATURES, type FeatureRegistry, type FeatureSpec, featureNames } from './features/index.js';
export { checkCluster, tooOldMessage } from './scheduler/cluster-check.js';
export { KINDS, KIND_NAMES, type KindRegistry, kindNames, kindSpec } from './kinds/index.js';
export { PRETTY_LOG_FORMAT } from './log-format.js';
export type { FollowUp, KindContext, KindRun, KindSpec, PoolSpec, SweepSpec } from './kinds/spec.js';
export { type Metrics, createMetrics } from './metrics.js';
export { Scheduler } from './scheduler.js';
export { poolSizes } from './scheduler/pools.js';
export type { SchedulerDeps } from './scheduler/context.js';
export type { ScanSummary } from './scheduler/stats-scan.js';
export type { SweepSummary } from './scheduler/sweep.js';
export type { WindowView } from './scheduler/windows.js';
export type { WorkerStatus } from './scheduler/worker-status.js';
export {
  type LoadConfigInput,
  type LoadResult,
  checkCooldownWindow,
  checkEmbeddedStore,
  loadConfig,
  resolveSettings,
  schedulerConfig,
  schedulerSettings,
} from './settings.js';
export { storeOptions } from './store-options.js';
export type { StoreOutageLog } from './store-outage.js';
