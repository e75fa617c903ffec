import { EMPTY_FLEET, type FleetData } from '../state/fleet.js';

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
 * Where the dashboard's data comes from: {@link FleetFeed} in production, a
 * {@link StaticFleetSource} in tests and benchmarks. Shaped for `useSyncExternalStore`.
 */
export interface FleetSource {
  subscribe(listener: () => void): () => void;
  getSnapshot(): FleetSnapshot;
  /** Asks for a full re-read soon (after an action, so its effect shows at once). */
  refresh(): void;
  /** The operator's search (`/`) in a list view, for a source that asks the master for matches too. */
  search?(view: string, q: string): void;
}

/** A {@link FleetSource} whose snapshot is set by hand. */
export class StaticFleetSource implements FleetSource {
  #snapshot: FleetSnapshot;
  readonly #listeners = new Set<() => void>();
  /** How often {@link refresh} was called. */
  refreshes = 0;
  /** The searches it was told of, as `view:q`. */
  readonly searches: string[] = [];

  constructor(data: FleetData = EMPTY_FLEET, connection?: Partial<Connection>) {
    this.#snapshot = { data, connection: { state: 'live', error: undefined, lastUpdateMs: undefined, ...connection } };
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  getSnapshot(): FleetSnapshot {
    return this.#snapshot;
  }

  refresh(): void {
    this.refreshes++;
  }

  search(view: string, q: string): void {
    this.searches.push(`${view}:${q}`);
  }

  /** Replaces the data and/or connection and notifies (synchronously). */
  set(change: { data?: FleetData; connection?: Partial<Connection> }): void {
    this.#snapshot = {
      data: change.data ?? this.#snapshot.data,
      connection: { ...this.#snapshot.connection, ...change.connection },
    };
    for (const l of this.#listeners) l();
  }
}
