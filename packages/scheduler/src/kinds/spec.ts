import type { StoreStats, TaskKind, TaskOutcome } from '@maintd/core';
import type { z } from 'zod';
import type { ExecutorDeps, WorkerAttempt } from '../executor.js';
import type { Registry } from 'prom-client';

/**
 * A pool of a kind's own (docs/ARCHITECTURE.md §3.2): slots that only its kinds use, so that they
 * neither wait behind nor crowd out the rest. Kinds without one run in the general pool
 * (`TASK_CONCURRENCY`), and so do a pool's kinds while its setting is 0.
 */
export interface PoolSpec {
  /** Its name, as the master's registration and logs show it; kinds naming one name share it. */
  readonly name: string;
  /** The setting (env var, declared in the kind's `settings`) holding its slots; 0: no pool of its own. */
  readonly sizeSetting: string;
}

/** A kind's automatic sweep: which stores are due, and the settings that pace it. */
export interface SweepSpec {
  /** Name of the periodic job in etcd (`P/sweeps/<job>`), one run per interval fleet-wide. */
  readonly job: string;
  /** The setting (env var) holding the sweep interval in seconds; 0 disables the sweep. */
  readonly intervalSetting: string;
  /** The setting (env var) holding the backlog at which a store is due. */
  readonly thresholdSetting: string;
  /** A store's backlog for this kind, from its stats row; the sweep serves the biggest first. */
  readonly backlog: (row: StoreStats) => number;
}

/** What one run of a kind needs: the worker fan-out's settings and the store's owners. */
export interface KindContext extends ExecutorDeps {
  /** The endpoints the last stats scan saw report the store; undefined when unknown. */
  readonly owners: () => Promise<readonly string[] | undefined>;
}

/** What one run of a kind came to. */
export interface KindRun {
  readonly outcome: TaskOutcome;
  /** Every worker call, in call order. */
  readonly attempts: readonly WorkerAttempt[];
  /** Numbers the run reported (e.g. `fragments_added`), for the kinds that follow up on it. */
  readonly facts?: Readonly<Record<string, number>>;
}

/** A kind that is enqueued after another kind's task on the same store succeeds. */
export interface FollowUp {
  /** The kind whose success may lead to this one. */
  readonly after: TaskKind;
  /** Whether that run calls for this kind (from its facts). */
  readonly when: (facts: Readonly<Record<string, number>>) => boolean;
}

/**
 * One task kind as a plug-in (docs/ARCHITECTURE.md §2.1): everything the scheduler, the settings, the metrics
 * and the API need to know about it. A kind is one file in `kinds/` plus one registry line.
 */
export interface KindSpec {
  /** A pool of its own; absent: the general pool runs it. */
  readonly pool?: PoolSpec;
  /**
   * The worker route that runs it, `POST /api/v1/internal/<route>/<store>` (docs/ARCHITECTURE.md
   * §3.3): what a simulated worker serves for it.
   */
  readonly route: string;
  /** Its automatic sweep; absent for kinds enqueued only by hand or as a follow-up. */
  readonly sweep?: SweepSpec;
  /** Its enqueue as a follow-up of another kind (source `sweep`, deduped, cooldown-gated). */
  readonly follows?: FollowUp;
  /** Settings this kind adds to the settings schema, keyed by env var. */
  readonly settings: Readonly<Record<string, z.ZodType>>;
  /**
   * Metrics of its own, registered on a master's registry once; the observer they answer sees
   * every run of the kind on that master (its outcome, worker calls and facts).
   */
  readonly metrics?: (registry: Registry) => (run: KindRun) => void;
  /** Runs one task of this kind against the workers. Never rejects for worker misbehaviour. */
  readonly run: (target: string, ctx: KindContext) => Promise<KindRun>;
}
