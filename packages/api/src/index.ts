export { MAX_BODY_BYTES } from './contract.js';
export { openApiDocument } from './document.js';
export { EventMessageSchema, type MaintdEvent, MaintdEventSchema } from './events.js';
export { capacityRoute } from './routes/capacity.js';
export { type CapacityBody, CapacitySchema } from './schemas/capacity.js';
export { type CauseView, CauseSchema } from './schemas/causes.js';
export {
  causesRoute,
  cooldownDetailRoute,
  listCooldownsRoute,
  parkRoute,
  parkTargetsRoute,
  policyRoute,
  resetCooldownRoute,
  resetCooldownsRoute,
} from './routes/cooldowns.js';
export { patchClusterRoute } from './routes/cluster.js';
export { listAuditRoute } from './routes/audit.js';
export { AuditPageSchema, auditEntryView } from './schemas/audit.js';
export { eventsRoute } from './routes/events.js';
export { mastersRoute, storesRoute, workersRoute } from './routes/fleet.js';
export { healthRoute, metricsRoute, openApiRoute, readyRoute } from './routes/operations.js';
export { enqueueRoute, getTaskRoute, listTasksRoute } from './routes/tasks.js';
export {
  type CooldownSort,
  CooldownSortSchema,
  type CooldownState,
  type CooldownView,
  CooldownSchema,
} from './schemas/cooldown.js';
export { BULK_SAMPLE_MAX, type BulkResult, BulkResultSchema, CooldownDetailSchema } from './schemas/timeline.js';
export { clusterBody } from './schemas/cluster.js';
export { PolicySchema, WindowSchema } from './schemas/policy.js';
export { type WindowInput, capacityBody, cooldownView, policyView, timelineEventView } from './views.js';
