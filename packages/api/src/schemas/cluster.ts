/**
 * The cluster's feature gates as the API shows them (docs/ARCHITECTURE.md §2.8): which versions
 * the live masters run, and where each feature stands.
 */
import { z } from '@hono/zod-openapi';
import type { ClusterView } from '@maintd/core';

const FeatureRow = z
  .object({
    name: z.string().describe('The feature'),
    state: z
      .string()
      .describe(
        '`enabled`: switched on, every master writes it; `waiting`: a live master does not understand it, so none writes it and the fleet behaves as the previous release; `held`: every live master understands it but `preserve_downgrade` holds it off; `ready`: the next cluster check switches it on. Clients must accept states they do not know',
      ),
    understood_by: z.array(z.string()).describe('Live masters whose registration lists it, by id'),
    waiting_for: z.array(z.string()).describe('Live masters whose registration does not list it, by id'),
    enabled_at: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe('When it was switched on, in milliseconds since the Unix epoch; null while it is not'),
  })
  .openapi('ClusterFeature', { description: 'One cluster feature and where it stands' });

/** Schema of the cluster's gates in `GET /api/v1/masters` and `PATCH /api/v1/cluster`. */
export const ClusterSchema = z
  .object({
    versions: z.array(z.string()).describe('The distinct maintd versions the live masters run, sorted'),
    preserve_downgrade: z
      .boolean()
      .describe('While true no feature is switched on, so a master can still be rolled back to the previous release'),
    features: z
      .array(FeatureRow)
      .describe('Every feature a live master understands or the cluster has switched on, by name; empty when none'),
  })
  .openapi('Cluster', {
    description:
      'What the live masters agree to write: a feature is switched on only once every live master understands it, and never switched off',
  });

/** The cluster's gates as the API serves them. */
export type ClusterBody = z.infer<typeof ClusterSchema>;

/** The API's view of a {@link ClusterView}. */
export function clusterBody(view: ClusterView): ClusterBody {
  return {
    versions: [...view.versions],
    preserve_downgrade: view.preserveDowngrade,
    features: view.features.map((f) => ({
      name: f.name,
      state: f.state,
      understood_by: [...f.understoodBy],
      waiting_for: [...f.waitingFor],
      enabled_at: f.enabledAt,
    })),
  };
}
