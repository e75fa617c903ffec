/**
 * The master's JSON shapes as the TUI sees them, all derived from the generated OpenAPI types in
 * `schema.ts` (`pnpm gen:api`), the event stream's payloads included: nothing here is written by
 * hand.
 */
import type { AuditStreamEvent } from './audit.js';
import type { components, paths } from './schema.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** One page of `GET /api/v1/tasks`. */
export type TaskPage = Json<paths['/api/v1/tasks']['get']['responses'][200]>;
/** A task record (`TaskRecord` of docs/ARCHITECTURE.md §2.1). */
export type Task = TaskPage['tasks'][number];
/** A maintenance kind: any name core's pattern allows (which kinds there are, the masters say). */
export type TaskKind = Task['kind'];
/** A task's lifecycle state. */
export type TaskState = Task['state'];
/**
 * One kind on one store as the sweeps see it: its failure record (`TaskCooldown` of docs/ARCHITECTURE.md §2.1)
 * with `until`, its park when one is in force, and its `state`.
 */
export type Cooldown = Json<paths['/api/v1/scheduler/cooldowns']['get']['responses'][200]>[number];
/** Where a cooldown entry stands: parked, cooling, below the threshold, or lapsed. */
export type CooldownState = Cooldown['state'];
/** An operator's park of one kind on one store. */
export type Park = components['schemas']['Park'];
/** The failure-cooldown policy a master runs (`GET /api/v1/scheduler/policy`). */
export type Policy = components['schemas']['CooldownPolicy'];
/** One page of `GET /api/v1/stores`. */
export type StorePage = Json<paths['/api/v1/stores']['get']['responses'][200]>;
/** A store's stats row with its cooldown records. */
export type Store = StorePage['stores'][number];
/** A live master's registration. */
export type Master = Json<paths['/api/v1/masters']['get']['responses'][200]>['masters'][number];
/** A worker endpoint with its last scan result. */
export type Worker = Json<paths['/api/v1/workers']['get']['responses'][200]>['workers'][number];
/** Query of `GET /api/v1/tasks`. */
export type TaskQuery = NonNullable<paths['/api/v1/tasks']['get']['parameters']['query']>;

/** One thing that happened to one kind on one store; its `type` may be one of a later release. */
export type TimelineEvent = components['schemas']['TimelineEvent'];
/** `GET /api/v1/scheduler/cooldowns/{kind}/{target}`: the entry, the policy and the timeline of one pair. */
export type CooldownDetail = components['schemas']['CooldownDetail'];
/** What a bulk park or reset over the cooldown list's filter answers (a dry run: what it would do). */
export type BulkResult = components['schemas']['BulkResult'];
/** The `state` filter of the paged cooldown list and of the bulk actions. */
export type CooldownStateFilter = NonNullable<
  NonNullable<paths['/api/v1/scheduler/cooldowns']['get']['parameters']['query']>['state']
>;
/** `GET /api/v1/capacity`: the fleet's slot time over the last hour, by kind, outcome and store. */
export type Capacity = components['schemas']['Capacity'];
/** One kind's slot time over the last hour. */
export type KindCapacity = components['schemas']['KindCapacity'];
/** One store's slot time over the last hour (a kind's top consumers). */
export type StoreUse = components['schemas']['StoreUse'];
/** A cause of failures and how many stores fail with it (`GET /api/v1/scheduler/causes`). */
export type FailureCause = components['schemas']['FailureCause'];
/** A kind's maintenance window, as the policy serves it. */
export type MaintenanceWindow = components['schemas']['MaintenanceWindow'];
/** A `timeline` event of `GET /api/v1/events`: one new event of a pair's timeline. */
export type TimelineStreamEvent = components['schemas']['TimelineStreamEvent'];

/**
 * A change sent over `GET /api/v1/events`: the `data` of a `task`, `task_deleted`, `cooldown`,
 * `timeline` or `audit` event. The `audit` event's type is the one exception to the rule above:
 * `api/audit.ts` derives it from the dashboard's own (loose) check, so the dashboard reads an
 * audit trail whatever the master's document says of it.
 */
export type MaintdEvent =
  | components['schemas']['TaskEvent']
  | components['schemas']['TaskDeletedEvent']
  | components['schemas']['CooldownEvent']
  | TimelineStreamEvent
  | AuditStreamEvent;
