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

/**
 * Every cluster feature this release understands, one line each. Empty in 0.1.0, the first
 * release with gates: a later release that writes something 0.1.0 would misread (a new task
 * state, a new record shape, a new key 0.1.0 acts on) adds its feature here and writes it only
 * where `Scheduler.featureInUse` says so.
 */
export const FEATURES: FeatureRegistry = {
  // name: { description: '…' },
};

/** The features of `registry` (default the shipped one), sorted. */
export function featureNames(registry: FeatureRegistry = FEATURES): readonly string[] {
  return Object.keys(registry).sort();
}
