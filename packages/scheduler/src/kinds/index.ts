import type { TaskKind } from '@maintd/core';
import { compact } from './compact.js';
import { indexId } from './index-id.js';
import { mergeWal } from './merge-wal.js';
import type { KindSpec } from './spec.js';

/**
 * Every task kind the scheduler runs, one line each (docs/ARCHITECTURE.md §2.1). The scheduler, the settings
 * schema, the metrics labels and the API iterate over this registry; nothing else names a kind.
 */
export const KINDS = {
  merge_wal: mergeWal,
  compact,
  index_id: indexId,
} as const satisfies Record<TaskKind, KindSpec>;

/** The registry's kinds, in registry order. */
export const KIND_NAMES = Object.keys(KINDS) as TaskKind[];

/** The spec of one kind. */
export function kindSpec(kind: TaskKind): KindSpec {
  return KINDS[kind];
}
