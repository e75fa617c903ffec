import type { Connection, FleetSnapshot, FleetSource } from '../src/data/source.js';
import { EMPTY_FLEET, type FleetData } from '../src/state/fleet-data.js';

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
