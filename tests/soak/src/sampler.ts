import { readFile } from 'node:fs/promises';
import type { Kv } from '@maintd/core';
import { Inspector } from './inspector.js';
import type { Daemon } from './fleet.js';
import type { Sample } from './windows.js';

/** Resident set size of process `pid` in bytes, from `/proc/<pid>/status` (Linux). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

/** Keys under `prefix/` counted by their first segment (`tasks`, `queue`, `timeline`, …). */
export function keysBySection(prefix: string, keys: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const key of keys) {
    const section = key.slice(prefix.length + 1).split('/', 1)[0] ?? '';
    out.set(section, (out.get(section) ?? 0) + 1);
  }
  return out;
}

/** The most events any one (kind, store) holds on its timeline (`timeline/<kind>/<hex>/<id>` keys). */
export function fullestTimeline(prefix: string, keys: readonly string[]): number {
  const perPair = new Map<string, number>();
  const section = `${prefix}/timeline/`;
  for (const key of keys) {
    if (!key.startsWith(section)) continue;
    const pair = key.slice(section.length).split('/', 2).join('/');
    perPair.set(pair, (perPair.get(pair) ?? 0) + 1);
  }
  return Math.max(0, ...perPair.values());
}

/**
 * Sections that fill toward a bound by design for days, not minutes: the timeline (each pair up
 * to `TASK_TIMELINE_LIMIT` events for `TASK_TIMELINE_TTL_SECS`, pairs as failures and operators
 * reach new stores) and the audit trail (`AUDIT_LIMIT` entries, one per operator action). Their
 * bounds are judged instead (the fullest pair, the trail's count).
 */
export const FILLING_SECTIONS = ['timeline', 'audit'] as const;

/** etcd's keys outside {@link FILLING_SECTIONS}: what must stay flat. */
export const ETCD_KEYS_HELD = 'etcd keys total, less timeline and audit';

/** The series of {@link fullestTimeline}. */
export const TIMELINE_FULLEST = 'etcd timeline, fullest pair';

/** Named series of samples, as the run collects them. */
export type Series = Map<string, Sample[]>;

const push = (series: Series, name: string, sample: Sample): void => {
  const list = series.get(name) ?? [];
  list.push(sample);
  series.set(name, list);
};

/**
 * Samples the daemons (heap after a full collection through the inspector, RSS) and etcd's keys
 * per section, into named series.
 */
export class Sampler {
  readonly series: Series = new Map();
  readonly #daemons: readonly { daemon: Daemon; inspector: Inspector }[];
  readonly #kv: Kv;
  readonly #prefix: string;

  private constructor(daemons: readonly { daemon: Daemon; inspector: Inspector }[], kv: Kv, prefix: string) {
    this.#daemons = daemons;
    this.#kv = kv;
    this.#prefix = prefix;
  }

  static async open(daemons: readonly Daemon[], kv: Kv, prefix: string): Promise<Sampler> {
    const inspected = await Promise.all(
      daemons.map(async (daemon) => ({ daemon, inspector: await Inspector.connect(daemon.inspector) })),
    );
    return new Sampler(inspected, kv, prefix);
  }

  /** One round of samples at `atMin` minutes into the run. */
  async sample(atMin: number): Promise<void> {
    // One daemon at a time: a forced collection takes a core for a moment.
    for (const { daemon, inspector } of this.#daemons) {
      push(this.series, `${daemon.name} heap`, { atMin, value: await inspector.heapAfterGc() });
      push(this.series, `${daemon.name} rss`, { atMin, value: await rssBytes(daemon.child.pid) });
    }
    const { kvs } = await this.#kv.range(`${this.#prefix}/`, { keysOnly: true });
    const keys = kvs.map((kv) => kv.key);
    const sections = keysBySection(this.#prefix, keys);
    for (const name of this.series.keys())
      if (name.startsWith('etcd keys ') && name !== 'etcd keys total' && !sections.has(name.slice(10)))
        push(this.series, name, { atMin, value: 0 });
    for (const [section, n] of sections) push(this.series, `etcd keys ${section}`, { atMin, value: n });
    push(this.series, 'etcd keys total', { atMin, value: kvs.length });
    const filling = FILLING_SECTIONS.reduce((n, section) => n + (sections.get(section) ?? 0), 0);
    push(this.series, ETCD_KEYS_HELD, { atMin, value: kvs.length - filling });
    push(this.series, TIMELINE_FULLEST, { atMin, value: fullestTimeline(this.#prefix, keys) });
  }

  /** Writes a heap snapshot of each daemon named in `names` to `<dir>/<name>-<label>.heapsnapshot`. */
  async snapshots(dir: string, label: string, names: readonly string[]): Promise<string[]> {
    const files: string[] = [];
    for (const { daemon, inspector } of this.#daemons) {
      if (!names.includes(daemon.name)) continue;
      const file = `${dir}/${daemon.name.replace(/\W+/g, '-')}-${label}.heapsnapshot`;
      await inspector.snapshot(file);
      files.push(file);
    }
    return files;
  }

  async close(): Promise<void> {
    await Promise.all(this.#daemons.map((d) => d.inspector.close()));
  }
}
