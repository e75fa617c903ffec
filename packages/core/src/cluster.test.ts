import { describe, expect, it } from 'vitest';
import { type ClusterRecord, FEATURE_SETTLE_MS, clusterView, featureInUse } from './cluster.js';
import type { MasterInfo } from './model.js';

const master = (id: string, version: string, features?: string[]): MasterInfo => ({
  id,
  host: 'h',
  pid: 1,
  version,
  started_at: 0,
  pools: {},
  ...(features ? { features } : {}),
});
const record = (over: Partial<ClusterRecord> = {}): ClusterRecord => ({
  features: [],
  preserve_downgrade: false,
  updated_at: 0,
  updated_by: 'a',
  ...over,
});

describe('clusterView', () => {
  it('waits for every live master to understand a feature, counting a master that predates features as understanding none', () => {
    const v = clusterView(['held_tasks'], [master('a', '0.2.0', ['held_tasks']), master('b', '0.0.9')], undefined);
    expect(v.features).toEqual([
      { name: 'held_tasks', state: 'waiting', understoodBy: ['a'], waitingFor: ['b'], enabledAt: null },
    ]);
    expect(v.ready).toEqual([]);
    expect(v.versions).toEqual(['0.0.9', '0.2.0']);
  });

  it('calls a feature ready once every live master understands it, and held while the downgrade is preserved', () => {
    const fleet = [master('a', '0.2.0', ['held_tasks']), master('b', '0.2.0', ['held_tasks'])];
    expect(clusterView(['held_tasks'], fleet, undefined).ready).toEqual(['held_tasks']);
    const held = clusterView(['held_tasks'], fleet, record({ preserve_downgrade: true }));
    expect(held.ready).toEqual([]);
    expect(held.features[0]?.state).toBe('held');
  });

  it('switches on only what this master itself understands, and nothing on an empty fleet', () => {
    expect(clusterView([], [master('a', '0.3.0', ['timeline'])], undefined).ready).toEqual([]);
    expect(clusterView(['timeline'], [], undefined).ready).toEqual([]);
  });

  it('names the switched-on features this master does not understand', () => {
    const on = record({ features: [{ name: 'held_tasks', enabled_at: 5, enabled_by: 'a' }] });
    const v = clusterView([], [master('b', '0.1.0', [])], on);
    expect(v.unknownEnabled).toEqual(['held_tasks']);
    expect(v.features).toEqual([
      { name: 'held_tasks', state: 'enabled', understoodBy: [], waitingFor: ['b'], enabledAt: 5 },
    ]);
  });
});

describe('featureInUse', () => {
  it('lets masters write a feature only once it has been on for the settle time', () => {
    const on = record({ features: [{ name: 'held_tasks', enabled_at: 1000, enabled_by: 'a' }] });
    expect(featureInUse(undefined, 'held_tasks', 1e9)).toBe(false);
    expect(featureInUse(on, 'held_tasks', 1000 + FEATURE_SETTLE_MS - 1)).toBe(false);
    expect(featureInUse(on, 'held_tasks', 1000 + FEATURE_SETTLE_MS)).toBe(true);
    expect(featureInUse(on, 'timeline', 1e9)).toBe(false);
  });
});
