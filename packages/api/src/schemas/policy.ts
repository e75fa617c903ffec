/**
 * The cooldown policy a master runs, as `GET /api/v1/scheduler/policy` serves it
 * (docs/ARCHITECTURE.md §2.7, §3.4).
 */
import { z } from '@hono/zod-openapi';
import { TaskKindSchema } from '@maintd/core';
import { Count } from './common.js';

/** One kind's maintenance window (`TASK_WINDOWS`), as the master that answers runs it now. */
export const WindowSchema = z
  .object({
    kind: TaskKindSchema.describe('The kind it bounds'),
    spec: z.string().describe('Its daily ranges of local time, e.g. `22:00-05:00;12:00-13:00`'),
    tz: z.string().describe('The IANA time zone of the ranges (`TASK_WINDOWS_TZ`)'),
    open: z.boolean().describe("Whether the kind's automatic work may start now"),
    next_change: z.iso
      .datetime()
      .nullable()
      .describe('When `open` next changes, as an ISO 8601 UTC timestamp; null when it never does'),
  })
  .openapi('MaintenanceWindow', {
    description:
      "When a kind's automatic work may start: outside it the kind's sweeps enqueue nothing and its queued automatic tasks wait; running tasks finish and manual runs are never held. A kind without one may run at any time.",
  });

/** The cooldown policy a master runs, as `GET /api/v1/scheduler/policy` serves it. */
export const PolicySchema = z
  .object({
    threshold: Count.describe(
      'Consecutive failures of a kind on a store before a cooldown window opens (`TASK_COOLDOWN_AFTER_FAILURES`; a count). 0: cooldowns are off',
    ),
    base_secs: Count.describe(
      'Window length when the threshold is first reached, in seconds (`TASK_COOLDOWN_BASE_SECS`); each further failure doubles it',
    ),
    max_secs: Count.describe(
      'Longest window, in seconds (`TASK_COOLDOWN_MAX_SECS`); also how long a failure count is kept',
    ),
    jitter: z
      .number()
      .min(0)
      .max(1)
      .describe(
        'Downward jitter fraction of a window (`TASK_COOLDOWN_JITTER`): a window is shortened by up to this fraction, the same on every master',
      ),
    kinds: z.array(TaskKindSchema).describe('The kinds whose failures are counted (`TASK_COOLDOWN_KINDS`)'),
    guard_percent: z
      .number()
      .min(0)
      .max(100)
      .describe(
        'Fleet guard (`TASK_COOLDOWN_MAX_PERCENT`, a percentage): no new window opens while more than this share of the stores already cools for that kind (parked stores are not counted)',
      ),
    count_infrastructure_failures: z
      .boolean()
      .describe(
        'Whether failures where no worker answered count too (`TASK_COOLDOWN_COUNT_INFRA`); false: only errors a worker reported about the store count',
      ),
    master_id: z.string().describe('Id of the master that answered: the policy is each master’s own setting'),
    windows: z
      .array(WindowSchema)
      .optional()
      .describe(
        "This master's maintenance windows (`TASK_WINDOWS`), one per kind that has one; absent when it keeps none (as from a master that predates them)",
      ),
  })
  .openapi('CooldownPolicy', {
    description:
      'The failure-cooldown policy of the master that answers. Every master reads its own settings: masters started with different settings apply different policies (each failure is counted by the master that ran the task, each sweep by the master that ran it). Ask each master to compare; `master_id` says which one answered.',
  });
/** The cooldown policy as the API serves it. */
export type PolicyView = z.infer<typeof PolicySchema>;
