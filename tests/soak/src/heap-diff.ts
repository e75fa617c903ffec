/** The parts of a V8 `.heapsnapshot` the comparison reads. */
export interface HeapSnapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: readonly string[];
      readonly node_types: readonly [readonly string[], ...unknown[]];
      readonly edge_fields: readonly string[];
      readonly edge_types: readonly [readonly string[], ...unknown[]];
    };
  };
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
  readonly strings: readonly string[];
}

/** Objects of one group (a constructor, or a kind of V8 internal) in a snapshot. */
export interface Group {
  count: number;
  bytes: number;
}

/** A group's change between two snapshots. */
export interface GroupChange {
  readonly group: string;
  readonly before: Group;
  readonly after: Group;
}

/** A snapshot indexed: each node's group and self size, and the edges as parallel arrays. */
export interface IndexedHeap {
  readonly groups: Map<string, Group>;
  /** Group name of node i (by node ordinal). */
  readonly nodeGroup: readonly string[];
  /** For retainers: edges as (from node ordinal, edge label, to node ordinal). */
  readonly edgeFrom: Uint32Array;
  readonly edgeTo: Uint32Array;
  readonly edgeLabel: readonly string[];
}

/**
 * The group a node is counted in: an object by its constructor's name, a closure by its
 * function's, an array, a native or a hidden node by its name in parentheses, and the many small
 * kinds (strings, numbers, code, shapes) each as one group.
 */
export function groupOf(type: string, name: string): string {
  switch (type) {
    case 'object':
      return name;
    case 'closure':
      return `(closure) ${name || 'anonymous'}`;
    case 'array':
    case 'native':
    case 'hidden':
    case 'synthetic':
      return `(${type}) ${name}`;
    case 'concatenated string':
    case 'sliced string':
    case 'string':
      return '(string)';
    default:
      return `(${type})`;
  }
}

/** Indexes a parsed snapshot by group, keeping its edges for {@link retainers}. */
export function indexHeap(h: HeapSnapshot): IndexedHeap {
  const { meta } = h.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    meta.node_fields.indexOf(f),
  ) as [number, number, number, number];
  const [eTypeAt, eNameAt, eToAt] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const nodeCount = h.nodes.length / nf;
  const groups = new Map<string, Group>();
  const nodeGroup: string[] = new Array<string>(nodeCount);
  const edgeCount = h.edges.length / ef;
  const edgeFrom = new Uint32Array(edgeCount);
  const edgeTo = new Uint32Array(edgeCount);
  const edgeLabel: string[] = new Array<string>(edgeCount);
  let e = 0;
  for (let n = 0; n < nodeCount; n++) {
    const base = n * nf;
    const group = groupOf(nodeTypes[h.nodes[base + typeAt]!] ?? '?', h.strings[h.nodes[base + nameAt]!] ?? '');
    nodeGroup[n] = group;
    const g = groups.get(group) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += h.nodes[base + sizeAt]!;
    groups.set(group, g);
    const edges = h.nodes[base + edgeCountAt]!;
    for (let i = 0; i < edges; i++, e++) {
      const eb = e * ef;
      const type = edgeTypes[h.edges[eb + eTypeAt]!] ?? '?';
      const raw = h.edges[eb + eNameAt]!;
      const named = type !== 'element' && type !== 'hidden';
      edgeFrom[e] = n;
      edgeTo[e] = h.edges[eb + eToAt]! / nf;
      edgeLabel[e] = type === 'weak' ? '(weak)' : named ? (h.strings[raw] ?? String(raw)) : '[]';
    }
  }
  return { groups, nodeGroup, edgeFrom, edgeTo, edgeLabel };
}

/** Groups by how much they grew from `before` to `after`, in bytes (then count), largest first. */
export function compareGroups(before: IndexedHeap, after: IndexedHeap): GroupChange[] {
  const names = new Set([...before.groups.keys(), ...after.groups.keys()]);
  const none = { count: 0, bytes: 0 };
  return [...names]
    .map((group) => ({ group, before: before.groups.get(group) ?? none, after: after.groups.get(group) ?? none }))
    .sort(
      (x, y) =>
        y.after.bytes - y.before.bytes - (x.after.bytes - x.before.bytes) ||
        y.after.count - y.before.count - (x.after.count - x.before.count),
    );
}

/** Edges that say nothing about what keeps an object alive: weak ones and prototype links. */
const ignored = (label: string | undefined): boolean => label === '(weak)' || label === '__proto__';

/**
 * What holds the members of `group` in a snapshot: each retaining edge counted as
 * `<retainer's group> .<edge name>` (an array element `[]`), weak and `__proto__` edges left out;
 * most first.
 */
export function retainers(heap: IndexedHeap, group: string, top = 5): { via: string; count: number }[] {
  const members = new Set<number>();
  heap.nodeGroup.forEach((g, n) => g === group && members.add(n));
  return tally(heap, members)
    .map(([via, from]) => ({ via, count: from.length }))
    .slice(0, top);
}

/** Retaining edges into `members`, by `<group> .<edge>`, with the retaining nodes; most first. */
function tally(heap: IndexedHeap, members: ReadonlySet<number>): [string, number[]][] {
  const out = new Map<string, number[]>();
  for (let e = 0; e < heap.edgeTo.length; e++) {
    if (!members.has(heap.edgeTo[e]!) || ignored(heap.edgeLabel[e])) continue;
    const via = `${heap.nodeGroup[heap.edgeFrom[e]!]} .${heap.edgeLabel[e]}`;
    const from = out.get(via) ?? [];
    from.push(heap.edgeFrom[e]!);
    out.set(via, from);
  }
  return [...out].sort((a, b) => b[1].length - a[1].length);
}

/**
 * The main retaining path of `group`, up to `depth` steps: its most common retainer (by group
 * and edge), then that retainer's most common one, and so on, each with how many objects it is.
 */
export function retainerChain(heap: IndexedHeap, group: string, depth = 6): { via: string; count: number }[] {
  let members = new Set<number>();
  heap.nodeGroup.forEach((g, n) => g === group && members.add(n));
  const chain: { via: string; count: number }[] = [];
  for (let i = 0; i < depth && members.size > 0; i++) {
    const [top] = tally(heap, members);
    if (!top) break;
    const holders = new Set(top[1]);
    chain.push({ via: top[0], count: holders.size });
    members = holders;
  }
  return chain;
}
