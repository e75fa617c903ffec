import type { TaskKind } from '@maintd/core';
import { compact } from './compact.js';
import { indexId } from './index-id.js';
import { mergeWal } from './merge-wal.js';
import type { KindSpec } from './spec.js';

/**
 * A registry: the kinds a master runs, each with its spec, in registry order. It decides what the
 * master claims, sweeps and accepts at enqueue, and which kinds its registration lists; a kind
 * outside it is another release's stored data (docs/ARCHITECTURE.md §2.1).
 */
export type KindRegistry = Readonly<Record<TaskKind, KindSpec>>;

/**
 * Every task kind the scheduler runs, one line each (docs/ARCHITECTURE.md §2.1). The scheduler, the settings
 * schema, the metrics labels and the API iterate over this registry; nothing else names a kind.
 */
export const KINDS = {
  merge_wal: mergeWal,
  compact,
  index_id: indexId,
} as const satisfies KindRegistry;

/** The kinds of `registry` (default the shipped one), in registry order. */
export function kindNames(registry: KindRegistry = KINDS): readonly TaskKind[] {
  return Object.keys(registry);
}

/** The shipped registry's kinds, in registry order. */
export const KIND_NAMES: readonly TaskKind[] = kindNames(KINDS);

/** The spec of one kind of `registry` (default the shipped one); throws for a kind it does not hold. */
export function kindSpec(kind: TaskKind, registry: KindRegistry = KINDS): KindSpec {
  // Own properties only: a kind name such as `constructor` must not reach Object.prototype.
  const spec = Object.hasOwn(registry, kind) ? registry[kind] : undefined;
  if (!spec) throw new Error(`kind '${kind}' is not in this master's registry`);
  return spec;
}
