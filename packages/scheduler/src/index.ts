export type { Config, LogLevel, SweepConfig } from './config.js';
export { type ExecutorDeps, type WorkerAttempt } from './executor.js';
export { KINDS, KIND_NAMES, kindSpec } from './kinds/index.js';
export { PRETTY_LOG_FORMAT } from './log-format.js';
export type { FollowUp, KindContext, KindRun, KindSpec, PoolName, SweepSpec } from './kinds/spec.js';
export { type Metrics, createMetrics } from './metrics.js';
export { Scheduler, type SchedulerDeps, type ScanSummary, type SweepSummary, type WorkerStatus } from './scheduler.js';
export {
  type EnvName,
  type LoadConfigInput,
  type LoadResult,
  type SettingDescriptor,
  type Settings,
  loadConfig,
  settings,
} from './settings.js';
export { storeOptions } from './store-options.js';
