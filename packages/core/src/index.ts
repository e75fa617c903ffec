export { whenAborted } from './abort.js';
export {
  AUDIT_ACTIONS,
  AUDIT_ACTION_PATTERN,
  type AuditAction,
  type AuditEntry,
  AuditEntrySchema,
  type AuditFilter,
  AuditFilterSchema,
  type AuditIntent,
  encodeAuditEntry,
} from './audit.js';
export {
  CLUSTER_CHECK_MS,
  type ClusterRecord,
  ClusterRecordSchema,
  type ClusterView,
  type EnabledFeature,
  EnabledFeatureSchema,
  FEATURE_SETTLE_MS,
  FeatureNameSchema,
  type FeatureState,
  type FeatureView,
  clusterView,
  encodeClusterRecord,
  featureInUse,
} from './cluster.js';
export { OUTAGE_REMINDER_MS, type ReconnectBackoffOptions, reconnectBackoff } from './backoff.js';
export { type Clock, FakeClock, systemClock, wallClockDeadline } from './clock.js';
export {
  ClaimLostError,
  ClosedError,
  ContentionError,
  CorruptRecordError,
  LeaseNotFoundError,
  MaintdError,
  StoreAccessDeniedError,
  StoreFullError,
  StoreUnavailableError,
  ValidationError,
  WatchCompactedError,
} from './errors.js';
export { createIdGenerator } from './ids.js';
export { DEFAULT_PREFIX, type Keys, type PairKey, keysFor, parsePairKey, targetFromHex, targetHex } from './keys.js';
export { EtcdKv } from './kv/etcd.js';
export { type EtcdConnectionSettings, type EtcdKvOptions, etcdKvOptions } from './kv/etcd-options.js';
export { diagnoseEtcdTls } from './kv/etcd-tls.js';
export { MemoryKv, type MemoryKvOptions } from './kv/memory.js';
export type {
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
} from './kv/port.js';
export {
  COOLDOWN_STATES,
  type CooldownState,
  type ErrorClass,
  ErrorClassSchema,
  type MasterInfo,
  MasterInfoSchema,
  type ParkRecord,
  ParkRecordSchema,
  type StoreStats,
  StoreStatsSchema,
  type SweepMark,
  SweepMarkSchema,
  KIND_PATTERN,
  TARGET_PATTERN,
  TargetSchema,
  type TaskCooldown,
  TaskCooldownSchema,
  type TaskKind,
  TaskKindSchema,
  type TaskRecord,
  TaskRecordSchema,
  type TaskSource,
  TaskSourceSchema,
  type TaskState,
  TaskStateSchema,
  type WorkerScan,
  WorkerScanSchema,
  cooldownState,
  encodeCooldown,
  encodePark,
  encodeTask,
  isParked,
  isTerminal,
} from './model.js';
export {
  type CooldownDecision,
  type CooldownPolicy,
  DEFAULT_COOLDOWN_POLICY,
  type FailureReport,
  type FleetState,
  LAST_ERROR_MAX,
  appliesTo,
  cooldownWindowMs,
  counts,
  isCooling,
  jitterHash,
  nextCooldown,
  sanitizeError,
  wouldCool,
} from './cooldown-policy.js';
export {
  CAPACITY_BUCKET_MS,
  CAPACITY_HOUR_MS,
  CAPACITY_TOP,
  CapacityLedger,
  type CapacityRecord,
  CapacityRecordSchema,
  type KindCapacity,
  type StoreUse,
  fleetCapacity,
} from './capacity.js';
export { CapacityStore, type CapacityStoreContext } from './store/capacity-store.js';
export { failureCause, normaliseError } from './cause.js';
export {
  type DailyRange,
  type MaintenanceWindow,
  type WindowState,
  type WindowsParse,
  isTimeZone,
  isWindowOpen,
  localMinute,
  openKinds,
  parseTaskWindows,
  windowState,
} from './maintenance-window.js';
export {
  TIMELINE_EVENT_TYPES,
  type TimelineEntry,
  type TimelineEvent,
  type TimelineEventType,
  TimelineEventSchema,
  encodeTimelineEvent,
  timelineView,
} from './timeline.js';
export { EVENT_LOOP_SAMPLE_MS, NON_COUNTER_TOTALS } from './process-metrics.js';
export { type Random, cryptoRandom, seededRandom } from './random.js';
export {
  ResumingWatch,
  type ResumingWatchOptions,
  type RetryPlan,
  type WatchFailure,
  type WatchFailurePhase,
} from './resuming-watch.js';
export { type ScanOptions, type ScanPage, scanPages } from './store/scan.js';
export {
  DEFAULT_SESSION_TTL_SECS,
  MIN_SESSION_TTL_SECS,
  Session,
  type SessionEvent,
  type SessionOptions,
} from './session.js';
export { SortedList } from './sorted-list.js';
export {
  type Actor,
  type AuditFields,
  type AuditPage,
  type AuditQuery,
  type AuditTrail,
  type BulkActions,
  type Claim,
  type ClaimOptions,
  type ClusterStore,
  type CooldownEffect,
  type CooldownRead,
  DEFAULT_STORE_OPTIONS,
  type EnqueueOptions,
  type EnqueueResult,
  type FinishResult,
  type HeldLock,
  type ListTasksQuery,
  type Pair,
  type ParkOptions,
  type RecordFailureResult,
  type RecoveryResult,
  type TaskOutcome,
  type TaskPage,
  TaskStore,
  type TaskStoreOptions,
  type Timelines,
} from './task-store.js';
