import type { FleetData } from '../state/fleet-data.js';

/** How the dashboard is connected to its master. */
export type ConnectionState = 'connecting' | 'live' | 'polling' | 'disconnected';

/** The connection as shown in the header. */
export interface Connection {
  /**
   * `live`: the event stream is open (changes arrive as they happen); `polling`: the stream is
   * down but reads work (data is at most one refresh old); `disconnected`: the master does not
   * answer (data shown is stale); `connecting`: nothing heard yet.
   */
  readonly state: ConnectionState;
  /** The latest failure, if any (also while live: a read that failed). */
  readonly error: string | undefined;
  /** When data last arrived (a successful read or an event), epoch ms. */
  readonly lastUpdateMs: number | undefined;
}

/** What the dashboard renders: data plus how fresh it is. Immutable; replaced on every change. */
export interface FleetSnapshot {
  readonly data: FleetData;
  readonly connection: Connection;
}

/**
 * Where the dashboard's data comes from: {@link FleetFeed} in production, a `StaticFleetSource`
 * (test/static-source.ts) in tests and benchmarks. Shaped for `useSyncExternalStore`.
 */
export interface FleetSource {
  subscribe(listener: () => void): () => void;
  getSnapshot(): FleetSnapshot;
  /** Asks for a full re-read soon (after an action, so its effect shows at once). */
  refresh(): void;
  /** The operator's search (`/`) in a list view, for a source that asks the master for matches too. */
  search?(view: string, q: string): void;
}
