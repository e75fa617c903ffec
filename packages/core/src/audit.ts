import { z } from 'zod';
import { TargetSchema, TaskKindSchema } from './model.js';

/**
 * The actions this release records in the audit trail (docs/ARCHITECTURE.md §2.9): one per
 * mutation route of the master's API. An action is data, not an enum: a trail written by a newer
 * release may hold actions this one does not know, and readers show them as they are.
 */
export const AUDIT_ACTIONS = [
  'task.enqueue',
  'cooldown.park',
  'cooldowns.park',
  'cooldown.reset',
  'cooldowns.reset',
  'cooldown.release',
  'cluster.update',
] as const;
/** One of {@link AUDIT_ACTIONS}, or a newer release's action. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number] | (string & {});

/** Pattern of an action: dotted lowercase words, like `cooldowns.reset`. */
export const AUDIT_ACTION_PATTERN = /^[a-z][a-z0-9_]{0,31}(\.[a-z][a-z0-9_]{0,31}){0,3}$/;

const Ms = z.number().int().nonnegative();
const Text = z.string().max(512);

/** The filter of a bulk action, as its request gave it. */
export const AuditFilterSchema = z
  .object({
    kind: TaskKindSchema.optional().describe('The kind the bulk action was narrowed to'),
    state: z.string().max(64).optional().describe('The state filter (absent: every state)'),
    q: z.string().max(512).optional().describe('The search text'),
    cause: z.string().max(64).optional().describe('The failure cause'),
  })
  .loose()
  .describe("A bulk action's filter");
/** The filter of a bulk action. */
export type AuditFilter = z.infer<typeof AuditFilterSchema>;

/**
 * Schema of one audit entry, stored at `P/audit/<id>`: one operator action that committed, who
 * made it, from where, through which route, what it named and what committed. Written in the
 * transaction of the mutation it records. Optional fields are omitted, never null (but
 * `until_ms` is null on a park that lasts until released). Fields of a newer release are kept.
 */
export const AuditEntrySchema = z
  .object({
    id: z.uuid({ version: 'v7' }).describe('Entry id: a UUIDv7 minted when it committed, so key order is time order'),
    at_ms: Ms.describe(
      'When the action committed (a bulk action: when it began), in milliseconds since the Unix epoch',
    ),
    who: Text.min(1).describe(
      'Who: the name of the token that authenticated the request (`default` is MASTER_API_TOKEN), or `anonymous` when mutations need no token (loopback clients while none is configured). Never the token itself',
    ),
    client: Text.min(1).describe('The client address the request came from'),
    action: z
      .string()
      .regex(AUDIT_ACTION_PATTERN)
      .describe(
        'What was done: `task.enqueue`, `cooldown.park`, `cooldowns.park` (bulk), `cooldown.reset`, `cooldowns.reset` (bulk), `cooldown.release`, `cluster.update`. Other values come from a newer release: show them as they are',
      ),
    route: Text.describe(
      'The API route: method and path template, e.g. `DELETE /api/v1/scheduler/cooldowns/{kind}/{target}`',
    ),
    kind: TaskKindSchema.optional().describe('The kind it named (one pair, or a task)'),
    target: TargetSchema.optional().describe('The store it named (one pair, or a task)'),
    task_id: z.string().max(64).optional().describe('The task it queued or promoted'),
    filter: AuditFilterSchema.optional().describe("A bulk action's filter"),
    reason: Text.optional().describe('Why (a park): the operator’s words'),
    until_ms: Ms.nullable()
      .optional()
      .describe('A park’s end (null: until released), in milliseconds since the Unix epoch'),
    outcome: z
      .string()
      .min(1)
      .max(64)
      .describe(
        'What committed: `queued` (a new task), `promoted` (a held task queued again as a manual one), `parked`, `reset`, `released`, `preserve_downgrade_set`, `preserve_downgrade_cleared`',
      ),
    count: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('A bulk action: how many stores it committed, exactly (updated in the transaction of each)'),
    matched: z.number().int().nonnegative().optional().describe('A bulk action: how many entries its filter matched'),
    master_id: Text.min(1).describe('The master that served the request'),
  })
  .loose()
  .describe('One operator action that committed, as the audit trail keeps it.');
/** One entry of the audit trail. */
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/**
 * Who asks for a mutation and through which route: what a caller hands the store so that the
 * audit entry goes into the mutation's own transaction. The store fills in the rest (id, time,
 * what it named, what committed, the master).
 */
export interface AuditIntent {
  /** The token's name, or `anonymous`; never the token. */
  readonly who: string;
  /** The client address. */
  readonly client: string;
  /** One of {@link AUDIT_ACTIONS}. */
  readonly action: AuditAction;
  /** Method and path template of the route. */
  readonly route: string;
  /** A bulk action's filter. */
  readonly filter?: AuditFilter;
  /** A bulk action: how many entries its filter matched. */
  readonly matched?: number;
  /**
   * Called with the entry once the transaction that wrote it (a bulk action: the last one)
   * committed: the writer's log line.
   */
  readonly written?: (entry: AuditEntry) => void;
}

/** Encodes an entry with a fixed field order and optional fields omitted, the unknown ones last. */
export function encodeAuditEntry(e: AuditEntry): string {
  const known = {
    id: e.id,
    at_ms: e.at_ms,
    who: e.who,
    client: e.client,
    action: e.action,
    route: e.route,
    kind: e.kind,
    target: e.target,
    task_id: e.task_id,
    filter: e.filter,
    reason: e.reason,
    until_ms: e.until_ms,
    outcome: e.outcome,
    count: e.count,
    matched: e.matched,
    master_id: e.master_id,
  };
  const extra = Object.entries(e).filter(([name]) => !Object.hasOwn(known, name));
  return JSON.stringify(extra.length === 0 ? known : { ...known, ...Object.fromEntries(extra) });
}
