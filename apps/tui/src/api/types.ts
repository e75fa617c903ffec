/**
 * The master's JSON shapes as the TUI sees them, all derived from the generated OpenAPI types in
 * `schema.ts` (`pnpm gen:api`), the event stream's payloads included: nothing here is written by
 * hand.
 */
import { TASK_KINDS, type components, type paths } from './schema.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** One page of `GET /api/v1/tasks`. */
export type TaskPage = Json<paths['/api/v1/tasks']['get']['responses'][200]>;
/** A task record (`TaskRecord` of DESIGN §2.1). */
export type Task = TaskPage['tasks'][number];
/** A maintenance kind. */
export type TaskKind = Task['kind'];
/** A task's lifecycle state. */
export type TaskState = Task['state'];
/** A failure-cooldown record (`TaskCooldown` of DESIGN §2.1) with `until`, its window's end in ISO 8601. */
export type Cooldown = Json<paths['/api/v1/scheduler/cooldowns']['get']['responses'][200]>[number];
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

/** A change sent over `GET /api/v1/events`: the `data` of a `task`, `task_deleted` or `cooldown` event. */
export type MaintdEvent =
  | components['schemas']['TaskEvent']
  | components['schemas']['TaskDeletedEvent']
  | components['schemas']['CooldownEvent'];

/** Every kind the master knows, in its order (generated from the API document). */
export { TASK_KINDS };
