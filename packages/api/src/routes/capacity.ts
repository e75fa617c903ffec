/** `GET /api/v1/capacity` (docs/ARCHITECTURE.md §3.5): where the fleet's slot time went. */
import { createRoute } from '@hono/zod-openapi';
import { LIST_RULE, OPEN, errors, json } from '../contract.js';
import { CapacitySchema } from '../schemas/capacity.js';

export const capacityRoute = createRoute({
  method: 'get',
  path: '/api/v1/capacity',
  operationId: 'getCapacity',
  tags: ['fleet'],
  summary: "Where the fleet's slot time went in the last hour",
  description: `Each kind's slots and the slot seconds (claim to finish) of the tasks finished in the last hour, fleet-wide whichever master ran them, by outcome, with the share spent on failed work and the 20 stores that used the most. Each master writes what it counted every 10 s (one small record, nothing per task), and a master that stopped keeps its count until its record is an hour old: an answer is at most about 15 s stale. ${LIST_RULE}`,
  security: OPEN,
  responses: {
    200: json(CapacitySchema, 'Slot time by kind, outcome and store'),
    ...errors,
  },
});
