/**
 * Where the fleet's slot time went over the last hour, as `GET /api/v1/capacity` serves it
 * (docs/ARCHITECTURE.md §3.5).
 */
import { z } from '@hono/zod-openapi';
import { TargetSchema, TaskKindSchema } from '@maintd/core';
import { Count } from './common.js';

const Seconds = z.number().nonnegative();

const StoreUse = z
  .object({
    target: TargetSchema.describe('The store'),
    busy_seconds: Seconds.describe('Slot seconds its finished tasks used'),
    failed_seconds: Seconds.describe('Of those, the slot seconds of its failed tasks'),
    tasks: Count.describe('Its finished tasks (a count)'),
    failed_tasks: Count.describe('Of those, the failed ones (a count)'),
  })
  .openapi('StoreUse', { description: "One store's slot time over the last hour" });

const KindCapacity = z
  .object({
    kind: TaskKindSchema.describe('The kind'),
    slots: Count.describe("Slots of the live masters' pools that run the kind (a count)"),
    busy_seconds: z
      .object({
        success: Seconds.describe('Slot seconds of the tasks that succeeded'),
        failed: Seconds.describe('Slot seconds of the tasks that failed'),
      })
      .describe('Slot seconds (claim to finish) of the tasks finished in the hour, by outcome'),
    failed_share: z
      .number()
      .min(0)
      .max(1)
      .describe('Failed slot seconds over all slot seconds (0 when none): the capacity spent on failing work'),
    tasks: Count.describe('Tasks finished in the hour (a count)'),
    failed_tasks: Count.describe('Of those, the failed ones (a count)'),
    top: z.array(StoreUse).describe('The stores that used the most slot time, at most 20, biggest first'),
  })
  .openapi('KindCapacity', { description: "One kind's slot time over the last hour, fleet-wide" });

/** Schema of `GET /api/v1/capacity`. */
export const CapacitySchema = z
  .object({
    window_secs: Count.describe('The span answered for, in seconds (3600: the last hour)'),
    at: z.iso.datetime().describe('When the answer was made, as an ISO 8601 UTC timestamp'),
    kinds: z.array(KindCapacity).describe('Every kind with slots or slot time, by name'),
  })
  .openapi('Capacity', {
    description:
      "Where the fleet's slot time went over the last hour, whichever master ran the tasks: each master writes what it counted every 10 s, so an answer is at most about 15 s stale.",
  });
/** The capacity answer as the API serves it. */
export type CapacityBody = z.infer<typeof CapacitySchema>;
