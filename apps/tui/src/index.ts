// The dashboard's building blocks, for the `maintd-top` binary and the benchmark (bench/tui.bench.ts).
export { type ActionApi, App, type AppProps, execute, hintsFor, resolveAction } from './App.js';
export { ApiError, type ClientOptions, ConnectionError, MaintdClient } from './api/client.js';
export { type MaintdEvent, parseMaintdEvent, readEventStream } from './api/events.js';
export type { Cooldown, Master, Store, Task, TaskKind, Worker } from './api/types.js';
export { type CliOptions, parseCli } from './cli.js';
export { type FeedOptions, FleetFeed, deriveConnection } from './data/feed.js';
export {
  type Connection,
  type ConnectionState,
  type FleetSnapshot,
  type FleetSource,
  StaticFleetSource,
} from './data/source.js';
export { main } from './main.js';
export { type DashboardOptions, renderDashboard } from './render.js';
export { sanitizeText } from './sanitize.js';
export { EMPTY_FLEET, type FleetData, applyEvents, cooldownKey, cooldownMap, taskMap } from './state/fleet.js';
export { VERSION } from './version.js';
