/** The cluster route of the master's API (docs/ARCHITECTURE.md §2.8, §3.4): the downgrade hold. */
import { createRoute, z } from '@hono/zod-openapi';
import { MUTATION_SECURITY, json, mutationErrors, mutationQuery } from '../contract.js';
import { ClusterSchema } from '../schemas/cluster.js';

const ClusterPatch = z
  .object({
    preserve_downgrade: z
      .boolean()
      .describe(
        'true: switch no new feature on, so that any master can still be rolled back to the previous release; false: let the masters switch on every feature all of them understand',
      ),
  })
  .strict()
  .openapi('ClusterPatch', { description: 'What to change in the cluster record' });

export const patchClusterRoute = createRoute({
  method: 'patch',
  path: '/api/v1/cluster',
  operationId: 'patchCluster',
  tags: ['fleet'],
  summary: 'Hold off or allow new cluster features',
  description:
    'Sets `preserve_downgrade` in the cluster record every master shares. While it is true, a feature that every live master understands is not switched on: the fleet keeps writing what the previous release reads, so a master can be rolled back. Clear it to finish an upgrade; a feature once switched on stays on. Answers the cluster as it now stands.',
  security: MUTATION_SECURITY,
  request: {
    query: mutationQuery({}),
    body: { required: true, description: 'The change', content: { 'application/json': { schema: ClusterPatch } } },
  },
  responses: {
    200: json(ClusterSchema, 'The cluster as it now stands'),
    ...mutationErrors,
  },
});
