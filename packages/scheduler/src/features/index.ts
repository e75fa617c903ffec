/** What a cluster feature is: a behaviour whose writes a master of an earlier release would misread. */
export interface FeatureSpec {
  /** What switching it on changes, for the log and `GET /api/v1/masters`. */
  readonly description: string;
}

/**
 * A feature registry: the cluster features a master understands (docs/ARCHITECTURE.md §2.8). Its
 * names go into the master's registration; a feature is switched on for the fleet only once
 * every live master lists it, and until then every master behaves as the previous release did.
 */
export type FeatureRegistry = Readonly<Record<string, FeatureSpec>>;

/** The automatic tasks of a parked (kind, store) wait in state `held`, which 0.1.0 cannot read. */
export const HELD_TASKS = 'held_tasks';

/**
 * Every cluster feature this release understands, one line each. A release that writes something
 * the previous one would misread (a new task state, a new record shape, a new key it acts on)
 * adds its feature here and writes it only where `Scheduler.featureInUse` says so.
 */
export const FEATURES: FeatureRegistry = {
  [HELD_TASKS]: { description: 'a park holds the automatic tasks of its (kind, store) queued before it (state held)' },
};

/** The features of `registry` (default the shipped one), sorted. */
export function featureNames(registry: FeatureRegistry = FEATURES): readonly string[] {
  return Object.keys(registry).sort();
}
