import { type TaskKind, failureCause } from '@maintd/core';
import type { CauseView } from '@maintd/api';
import type { CooldownPair } from './cooldown-query.js';

export type { CauseView };

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The failure records among `pairs` (of `kind`, or every kind) grouped by the cause of their
 * latest error (docs/ARCHITECTURE.md §2.7): how many stores, how many failures, when the first
 * and the last. The most stores first, then the most failures, then by cause, so every master
 * orders one fleet alike. The example is the latest error among them.
 */
export function causesOf(pairs: Iterable<CooldownPair>, kind: TaskKind | undefined): CauseView[] {
  const groups = new Map<
    string,
    {
      example: string;
      exampleAt: number;
      kinds: Set<TaskKind>;
      targets: Set<string>;
      failures: number;
      first: number;
      last: number;
    }
  >();
  for (const p of pairs) {
    const c = p.cooldown;
    if (!c || (kind && p.kind !== kind)) continue;
    const cause = failureCause(c.last_error, p.target);
    let g = groups.get(cause);
    if (!g) {
      g = {
        example: c.last_error,
        exampleAt: c.last_failure_ms,
        kinds: new Set(),
        targets: new Set(),
        failures: 0,
        first: c.first_failure_ms,
        last: c.last_failure_ms,
      };
      groups.set(cause, g);
    }
    g.kinds.add(p.kind);
    g.targets.add(p.target);
    g.failures += c.failures;
    g.first = Math.min(g.first, c.first_failure_ms);
    g.last = Math.max(g.last, c.last_failure_ms);
    if (c.last_failure_ms > g.exampleAt) {
      g.example = c.last_error;
      g.exampleAt = c.last_failure_ms;
    }
  }
  return [...groups]
    .map(([cause, g]) => ({
      cause,
      example: g.example,
      kinds: [...g.kinds].sort(),
      targets: g.targets.size,
      failures: g.failures,
      first_failure: iso(g.first),
      last_failure: iso(g.last),
    }))
    .sort((a, b) => b.targets - a.targets || b.failures - a.failures || (a.cause < b.cause ? -1 : 1));
}
