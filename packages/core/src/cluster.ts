import { z } from 'zod';
import { KIND_PATTERN, type MasterInfo, encodeRecord } from './model.js';

/**
 * A cluster feature's name. Feature and kind names share one pattern: both appear in logs, keys
 * and query strings.
 */
export const FeatureNameSchema = z
  .string()
  .regex(KIND_PATTERN, 'a feature name must match ^[a-z][a-z0-9_]{0,62}$')
  .describe('A cluster feature: a behaviour whose writes a master of an earlier release would misread');

/** Schema of one switched-on feature in the cluster record; fields of a newer release are kept. */
export const EnabledFeatureSchema = z.looseObject({
  name: FeatureNameSchema,
  enabled_at: z.number().int().nonnegative().describe('When it was switched on, in milliseconds since the Unix epoch'),
  enabled_by: z.string().describe('The master that switched it on'),
});
/** One switched-on feature: which, when and by whom. */
export type EnabledFeature = z.infer<typeof EnabledFeatureSchema>;

/** Schema of the cluster record at `P/cluster` (docs/ARCHITECTURE.md §2.8). */
export const ClusterRecordSchema = z
  .object({
    features: z
      .array(EnabledFeatureSchema)
      .describe('Features switched on, oldest first. Never switched off: a master that lacks one refuses to run'),
    preserve_downgrade: z
      .boolean()
      .describe('While true no feature is switched on, so masters of the previous release may still join'),
    updated_at: z
      .number()
      .int()
      .nonnegative()
      .describe('When the record last changed, in milliseconds since the Unix epoch'),
    updated_by: z.string().describe('Who changed it last: a master id, or the operator as the API names them'),
  })
  .describe('What the masters sharing one prefix have agreed to write: the fleet-wide feature gates.');
/** The fleet-wide feature gates, shared by every master of one prefix. */
export type ClusterRecord = z.infer<typeof ClusterRecordSchema>;

/** Encodes a cluster record, with the fields a newer release added to it. */
export function encodeClusterRecord(r: ClusterRecord): string {
  return encodeRecord(r, {
    features: r.features,
    preserve_downgrade: r.preserve_downgrade,
    updated_at: r.updated_at,
    updated_by: r.updated_by,
  });
}

/** Where one feature stands across the live masters. */
export type FeatureState =
  /** Switched on: every master writes it (after {@link FEATURE_SETTLE_MS}). */
  | 'enabled'
  /** Some live master's release does not understand it: nobody writes it yet. */
  | 'waiting'
  /** Every live master understands it, but `preserve_downgrade` holds it off. */
  | 'held'
  /** Every live master understands it: the next cluster check switches it on. */
  | 'ready';

/** One feature as {@link clusterView} sees it. */
export interface FeatureView {
  /** The feature's name. */
  readonly name: string;
  /** Where it stands. */
  readonly state: FeatureState;
  /** The live masters whose registration lists it, by id. */
  readonly understoodBy: readonly string[];
  /** The live masters whose registration does not: what it waits for. */
  readonly waitingFor: readonly string[];
  /** When it was switched on; null unless enabled. */
  readonly enabledAt: number | null;
}

/** What the live masters' registrations and the cluster record say together. */
export interface ClusterView {
  /** The distinct versions the live masters run, sorted. */
  readonly versions: readonly string[];
  /** Every feature some live master understands or the record has switched on, by name. */
  readonly features: readonly FeatureView[];
  /** Switched on, but not understood by `own`: the master with these features must not run. */
  readonly unknownEnabled: readonly string[];
  /** Features `own` understands that every live master understands, and that are off. */
  readonly ready: readonly string[];
  /** Whether an operator holds every new feature off (`PATCH /api/v1/cluster`). */
  readonly preserveDowngrade: boolean;
}

/**
 * How long after a feature is switched on masters start writing it: a master of an earlier
 * release that registered just as the feature was switched on learns of it from its next check
 * of the record (every {@link CLUSTER_CHECK_MS}) and stops before any such write reaches it.
 */
export const CLUSTER_CHECK_MS = 5_000;
/** See {@link CLUSTER_CHECK_MS}: two checks, so that a check in flight is not enough to miss it. */
export const FEATURE_SETTLE_MS = 2 * CLUSTER_CHECK_MS;

/**
 * The cluster's feature gates as seen by a master that understands `own` (docs/ARCHITECTURE.md
 * §2.8). A feature is switched on only once every live master's registration lists it; a master
 * that predates features lists none. Pure: the caller reads the registrations and the record.
 */
export function clusterView(
  own: readonly string[],
  masters: readonly MasterInfo[],
  record: ClusterRecord | undefined,
): ClusterView {
  const enabled = new Map((record?.features ?? []).map((f) => [f.name, f.enabled_at]));
  const names = new Set<string>(enabled.keys());
  for (const m of masters) for (const f of m.features ?? []) names.add(f);
  for (const f of own) names.add(f);
  const preserveDowngrade = record?.preserve_downgrade ?? false;
  const features = [...names].sort().map((name): FeatureView => {
    const understoodBy = masters.filter((m) => m.features?.includes(name)).map((m) => m.id);
    const waitingFor = masters.filter((m) => !m.features?.includes(name)).map((m) => m.id);
    const enabledAt = enabled.get(name) ?? null;
    const state: FeatureState =
      enabledAt !== null ? 'enabled' : waitingFor.length > 0 ? 'waiting' : preserveDowngrade ? 'held' : 'ready';
    return { name, state, understoodBy, waitingFor, enabledAt };
  });
  return {
    versions: [...new Set(masters.map((m) => m.version))].sort(),
    features,
    unknownEnabled: [...enabled.keys()].filter((name) => !own.includes(name)),
    // Never on an empty fleet: a master switches a feature on only once it sees its own registration.
    ready:
      masters.length === 0
        ? []
        : features.filter((f) => f.state === 'ready' && own.includes(f.name)).map((f) => f.name),
    preserveDowngrade,
  };
}

/** Whether `name` is switched on and settled at `nowMs`: whether a master may write it. */
export function featureInUse(record: ClusterRecord | undefined, name: string, nowMs: number): boolean {
  const f = record?.features.find((e) => e.name === name);
  return f !== undefined && nowMs >= f.enabled_at + FEATURE_SETTLE_MS;
}
