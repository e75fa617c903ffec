export { type AppDeps, MAX_BODY_BYTES, createApp } from './app.js';
export type { Config, LogLevel } from './config.js';
export { EventHub, type MaintdEvent } from './events.js';
export { type Metrics, createMetrics } from './metrics.js';
export { Scheduler, type SchedulerDeps, type ScanSummary, type SweepSummary, type WorkerStatus } from './scheduler.js';
export { type LoadConfigInput, type LoadResult, loadConfig, settings } from './env.js';
export { storeOptions } from './wiring.js';
