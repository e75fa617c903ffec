// The dashboard's building blocks for the benchmark (bench/tui.bench.ts); the `maintd-top` binary
// starts from main.ts.
export { type ActionApi } from './actions.js';
export { App, type AppProps } from './App.js';
export { type ClientOptions, MaintdClient } from './api/client.js';
export { MasterTransport } from './api/transport.js';
export type { MaintdEvent } from './api/events.js';
export type { Cooldown, Store, Task, TaskKind } from './api/types.js';
export { type FeedOptions, FleetFeed } from './data/feed.js';
export type { FleetSnapshot, FleetSource } from './data/source.js';
export { main } from './main.js';
export { type DashboardOptions, renderDashboard } from './render.js';
export { applyEvents, cooldownMap } from './state/fleet.js';
export { EMPTY_FLEET, type FleetData } from './state/fleet-data.js';
