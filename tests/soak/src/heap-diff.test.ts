import { describe, expect, it } from 'vitest';
import { type HeapSnapshot, compareGroups, groupOf, indexHeap, retainerChain, retainers } from './heap-diff.js';

/**
 * A snapshot in V8's layout: nodes as (type, name, id, self_size, edge_count), edges as (type,
 * name_or_index, to_node as an offset into `nodes`).
 */
function snapshot(
  nodes: readonly {
    type: string;
    name: string;
    size: number;
    edges?: { type: string; name: string | number; to: number }[];
  }[],
): HeapSnapshot {
  const nodeTypes = [
    'hidden',
    'array',
    'string',
    'object',
    'code',
    'closure',
    'regexp',
    'number',
    'native',
    'synthetic',
  ];
  const edgeTypes = ['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'];
  const strings: string[] = [];
  const str = (s: string): number => (strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
  const flatNodes: number[] = [];
  const flatEdges: number[] = [];
  nodes.forEach((n, i) => {
    flatNodes.push(nodeTypes.indexOf(n.type), str(n.name), i * 2 + 1, n.size, n.edges?.length ?? 0);
    for (const e of n.edges ?? [])
      flatEdges.push(edgeTypes.indexOf(e.type), typeof e.name === 'number' ? e.name : str(e.name), e.to * 5);
  });
  return {
    snapshot: {
      meta: {
        node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'],
        node_types: [nodeTypes, 'string', 'number', 'number', 'number'],
        edge_fields: ['type', 'name_or_index', 'to_node'],
        edge_types: [edgeTypes, 'string_or_number', 'node'],
      },
    },
    nodes: flatNodes,
    edges: flatEdges,
    strings,
  };
}

describe('groupOf', () => {
  it('names an object by its constructor and gathers every kind of string in one group', () => {
    expect(groupOf('object', 'Lease')).toBe('Lease');
    expect(groupOf('closure', '')).toBe('(closure) anonymous');
    expect(groupOf('sliced string', 'abc')).toBe('(string)');
    expect(groupOf('array', 'table')).toBe('(array) table');
  });
});

describe('compareGroups and retainers', () => {
  const early = snapshot([
    { type: 'synthetic', name: 'root', size: 0, edges: [{ type: 'property', name: 'cache', to: 1 }] },
    { type: 'object', name: 'Map', size: 32, edges: [{ type: 'element', name: 0, to: 2 }] },
    { type: 'object', name: 'Entry', size: 40 },
  ]);
  const late = snapshot([
    { type: 'synthetic', name: 'root', size: 0, edges: [{ type: 'property', name: 'cache', to: 1 }] },
    {
      type: 'object',
      name: 'Map',
      size: 32,
      edges: [
        { type: 'element', name: 0, to: 2 },
        { type: 'element', name: 1, to: 3 },
        { type: 'weak', name: 2, to: 4 },
      ],
    },
    { type: 'object', name: 'Entry', size: 40 },
    { type: 'object', name: 'Entry', size: 40 },
    { type: 'object', name: 'Entry', size: 48 },
  ]);

  it('orders groups by the bytes they gained, with counts and bytes before and after', () => {
    const [top, ...rest] = compareGroups(indexHeap(early), indexHeap(late));
    expect(top).toEqual({ group: 'Entry', before: { count: 1, bytes: 40 }, after: { count: 3, bytes: 128 } });
    expect(rest.map((c) => c.after.bytes - c.before.bytes)).toEqual([0, 0]);
  });

  it('names what holds a group by the retainer’s group and edge, weak edges left out', () => {
    expect(retainers(indexHeap(late), 'Entry')).toEqual([{ via: 'Map .[]', count: 2 }]);
    expect(retainers(indexHeap(late), 'Map')).toEqual([{ via: '(synthetic) root .cache', count: 1 }]);
  });

  it('follows the most common retainer up to the root', () => {
    expect(retainerChain(indexHeap(late), 'Entry')).toEqual([
      { via: 'Map .[]', count: 1 },
      { via: '(synthetic) root .cache', count: 1 },
    ]);
  });
});
