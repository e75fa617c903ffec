import type { TaskKind } from '@maintd/core';
import type { Registry } from 'prom-client';
import { type KindRegistry, kindNames, kindSpec } from '../kinds/index.js';
import type { KindRun } from '../kinds/spec.js';

/** What a kind's own metrics do with one of its runs. */
export type KindObserver = (run: KindRun) => void;

/**
 * Each registry's observers of the kinds' own metrics. prom-client refuses a metric name twice on
 * one registry, so a kind's metrics are registered once per registry however many schedulers
 * share it (simulations run several masters on one).
 */
const byRegistry = new WeakMap<Registry, Map<TaskKind, KindObserver | undefined>>();

/**
 * Registers the metrics each kind of `kinds` declares (`KindSpec.metrics`) on `registry`, once,
 * and answers the observers of those that declare any, by kind.
 */
export function kindObservers(registry: Registry, kinds: KindRegistry): ReadonlyMap<TaskKind, KindObserver> {
  let known = byRegistry.get(registry);
  if (!known) {
    known = new Map();
    byRegistry.set(registry, known);
  }
  const out = new Map<TaskKind, KindObserver>();
  for (const kind of kindNames(kinds)) {
    if (!known.has(kind)) known.set(kind, kindSpec(kind, kinds).metrics?.(registry));
    const observe = known.get(kind);
    if (observe) out.set(kind, observe);
  }
  return out;
}
