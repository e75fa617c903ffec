export { BEARER_AUTH, ErrorSchema, LIST_RULE, MAX_BODY_BYTES, PAGING_RULE } from './contract.js';
export { OPENAPI_INFO, ROUTES, openApiDocument } from './document.js';
export {
  EventMessageSchema,
  HelloEventSchema,
  type MaintdEvent,
  MaintdEventSchema,
  OverflowEventSchema,
} from './events.js';
export {
  SEARCH_MAX,
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
export {
  type AuditEntryView,
  AuditEntryViewSchema,
  type AuditPageBody,
  AuditPageSchema,
  auditEntryView,
} from './schemas/audit.js';
export { eventsRoute } from './routes/events.js';
export { mastersRoute, storesRoute, workersRoute } from './routes/fleet.js';
export { healthRoute, metricsRoute, openApiRoute, readyRoute } from './routes/operations.js';
export { enqueueRoute, getTaskRoute, listTasksRoute } from './routes/tasks.js';
export {
  COOLDOWN_PAGE_MAX,
  type CooldownSort,
  CooldownSortSchema,
  type CooldownState,
  CooldownStateFilterSchema,
  CooldownStateSchema,
  type CooldownView,
  CooldownSchema,
  type ParkView,
  ParkViewSchema,
} from './schemas/cooldown.js';
export {
  BULK_SAMPLE_MAX,
  type BulkResult,
  BulkResultSchema,
  type CooldownDetail,
  CooldownDetailSchema,
  TIMELINE_PAGE_MAX,
  type TimelineEventView,
  TimelineEventViewSchema,
} from './schemas/timeline.js';
export { type ClusterBody, ClusterSchema, clusterBody } from './schemas/cluster.js';
export { type PolicyView, PolicySchema } from './schemas/policy.js';
export { cooldownView, policyView, timelineEventView } from './views.js';
// The state of a (kind, store) is core's: re-exported so that this module's consumers keep their import.
export { cooldownState } from '@maintd/core';
