// The dashboard's building blocks for the benchmark (bench/tui.bench.ts); the `maintd-top` binary
// starts from main.ts. The published bundle (dist/main.js) exports these too, so the benchmark
// can time the dashboard as npm installs it (docs/ARCHITECTURE.md §4).
export { type ActionApi } from './actions.js';
export { App, type AppProps } from './App.js';
export { type ClientOptions, MaintdClient } from './api/client.js';
export { MasterTransport } from './api/transport.js';
export type { MaintdEvent } from './api/events.js';
export type { Cooldown, Store, Task, TaskKind } from './api/types.js';
export { type FeedOptions, FleetFeed } from './data/feed.js';
export type { FleetSnapshot, FleetSource } from './data/source.js';
export { type DashboardOptions, renderDashboard } from './render.js';
export { applyEvents, cooldownMap } from './state/fleet.js';
export { EMPTY_FLEET, type FleetData } from './state/fleet-data.js';
