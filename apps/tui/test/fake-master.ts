/**
 * A fake master for the feed tests and the benchmark: a real HTTP server with the master's read
 * routes, actions and `/api/v1/events` over in-memory data that tests change at will — including
 * answering slowly, never, or not at all. (The end-to-end test runs the real master instead.)
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { type ServerOptions as HttpsOptions, createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { cooldownState } from '@maintd/core';
import type { AuditEntry } from '../src/api/audit.js';
import type { MaintdEvent } from '../src/api/events.js';
import type {
  Capacity,
  Cooldown,
  FailureCause,
  Master,
  Policy,
  Store,
  Task,
  TimelineEvent,
  Worker,
} from '../src/api/types.js';
import { cooldownKey } from '../src/common/cooldown-key.js';

/** The fake's state; tests mutate it directly. */
export interface FakeState {
  masters: Master[];
  workers: Worker[];
  stores: Omit<Store, 'cooldowns'>[];
  cooldowns: Map<string, Cooldown>;
  tasks: Task[];
  guardOverflow: number;
  /** The policy `GET /api/v1/scheduler/policy` answers. */
  policy: Policy;
  /** Delay of every answer except the event stream. */
  delayMs: number;
  /** Answer nothing at all (requests hang until the fake closes). */
  hang: boolean;
  /** Requests received, as `METHOD /path?query`. */
  requests: string[];
  /** Timelines by cooldown key, newest first (`GET /scheduler/cooldowns/{kind}/{target}`). */
  timelines: Map<string, TimelineEvent[]>;
  /**
   * Answer as a 0.1.0 master: no detail route, no bulk park, `q` ignored on reads and refused
   * (400) on mutations.
   */
  legacy: boolean;
  /** Served over TLS: the CN of each request's client certificate, in order (`-` for none). */
  clientNames: string[];
  /** The audit trail, newest first (`GET /api/v1/audit`; a legacy master has none). */
  audit: AuditEntry[];
  /** What `GET /api/v1/capacity` answers (a legacy master: 404). */
  capacity: Capacity;
  /** What `GET /api/v1/scheduler/causes` answers (a legacy master: 404). */
  causes: FailureCause[];
}

/** A running fake master. */
export interface FakeMaster {
  readonly url: string;
  readonly port: number;
  readonly state: FakeState;
  /** Event-stream clients connected now. */
  readonly clients: number;
  /** Sends an event to every connected stream. */
  emit(event: MaintdEvent): void;
  /** Tells every stream it was too slow (the master's `overflow`) and ends it. */
  overflow(): void;
  /** Cuts every connection (streams included) without a goodbye. */
  dropConnections(): void;
  close(): Promise<void>;
}

/** A master registration. */
export function master(id = 'master-a'): Master {
  return {
    id,
    host: 'host-a',
    pid: 4242,
    version: '1.2.3',
    started_at: 1_700_000_000_000,
    pools: { general: 4, merge: 4 },
    kinds: ['merge_wal', 'compact', 'index_id'],
  };
}

/** The policy of a master with the defaults of docs/ARCHITECTURE.md §2.7. */
export function policy(over: Partial<Policy> = {}): Policy {
  return {
    threshold: 3,
    base_secs: 600,
    max_secs: 21_600,
    jitter: 0.1,
    kinds: ['merge_wal', 'compact', 'index_id'],
    guard_percent: 25,
    count_infrastructure_failures: false,
    master_id: 'master-a',
    ...over,
  };
}

/** The time the fixtures' `state` is derived at (the App tests' fixed "now"). */
const FIXTURE_NOW = 1_700_000_000_000;

/**
 * A cooling record, as the master serves it (`until` follows `until_ms`, `state` follows the
 * record at the fixtures' "now"). Its error reads cause first, as the master writes it.
 */
export function cooldown(target: string, over: Partial<Omit<Cooldown, 'until' | 'state'>> = {}): Cooldown {
  const record = {
    kind: 'merge_wal' as const,
    target,
    failures: 3,
    until_ms: 1_700_000_600_000 as number | null,
    last_error: `http://w1:8080: HTTP 500: Not found: .../data/${target}.lance (merged 0 generations across 0/1 workers)`,
    last_error_class: 'target' as const,
    first_failure_ms: 1_699_999_000_000,
    last_failure_ms: 1_700_000_000_000,
    last_task_id: '01a23766-0000-7000-8000-000000000000',
    ...over,
  };
  const state = cooldownState(record, record.parked, FIXTURE_NOW)!;
  return {
    ...record,
    until: record.until_ms === null ? null : new Date(record.until_ms).toISOString(),
    state,
    // As a master that counts the kind serves it: a park or an open window gates.
    gating: over.gating ?? (state === 'cooling' || state === 'parked'),
  };
}

/** A park record, as the master serves it inside a cooldown entry. */
export function park(reason: string, over: Partial<Cooldown['parked'] & object> = {}): NonNullable<Cooldown['parked']> {
  const p = {
    reason,
    by: 'token@127.0.0.1',
    parked_at_ms: FIXTURE_NOW - 60_000,
    until_ms: null as number | null,
    ...over,
  };
  return {
    ...p,
    parked_at: new Date(p.parked_at_ms).toISOString(),
    until: p.until_ms === null ? null : new Date(p.until_ms).toISOString(),
  };
}

/** An audit entry as the master writes it: `alice` resetting merge_wal on store-12 from 10.0.0.5. */
export function auditEntry(over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: '01a23766-aaaa-7000-8000-000000000001',
    at_ms: 1_700_000_000_000,
    at: '2023-11-14T22:13:20.000Z',
    who: 'alice',
    client: '10.0.0.5',
    action: 'cooldown.reset',
    route: 'DELETE /api/v1/scheduler/cooldowns/{kind}/{target}',
    kind: 'merge_wal',
    target: 'store-12',
    outcome: 'reset',
    master_id: 'master-a',
    ...over,
  };
}

/** Starts a fake master on a loopback port (0 = any; pass one to "restart" on the same port). */
export async function startFakeMaster(
  initial: Partial<FakeState> = {},
  port = 0,
  /** Serve HTTPS with these options (certificate, key, client CA) instead of HTTP. */
  tls?: HttpsOptions,
): Promise<FakeMaster> {
  const state: FakeState = {
    masters: [master()],
    workers: [],
    stores: [],
    cooldowns: new Map(),
    tasks: [],
    guardOverflow: 0,
    policy: policy(),
    delayMs: 0,
    hang: false,
    requests: [],
    timelines: new Map(),
    legacy: false,
    clientNames: [],
    audit: [],
    capacity: { window_secs: 3600, at: new Date(FIXTURE_NOW).toISOString(), kinds: [] },
    causes: [],
    ...initial,
  };
  const streams = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const route = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    const url = new URL(req.url ?? '/', 'http://x');
    const q = url.searchParams;
    const path = url.pathname;
    if (req.method === 'GET' && path === '/api/v1/masters') return json(res, 200, { masters: state.masters });
    if (req.method === 'GET' && path === '/api/v1/workers') return json(res, 200, { workers: state.workers });
    if (req.method === 'GET' && path === '/api/v1/scheduler/cooldowns') {
      const now = Date.now();
      const entries = [...state.cooldowns.values()].sort((a, b) =>
        cooldownKey(a.kind, a.target) < cooldownKey(b.kind, b.target) ? -1 : 1,
      );
      // Paged, as the master pages: one state (absent: cooling and parked), a cursor (here the
      // position), `Link` while more follow, `X-Total-Count`.
      const wanted = q.get('state');
      const match = entries.filter((c) => {
        const s = cooldownState(c, c.parked, now);
        return wanted ? s === wanted : s === 'cooling' || s === 'parked';
      });
      const limit = Number(q.get('limit'));
      const from = Number(q.get('cursor') ?? 0);
      const page = match.slice(from, from + limit);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-total-count': String(match.length),
      };
      if (from + limit < match.length) {
        const next = new URLSearchParams(q);
        next.set('cursor', String(from + limit));
        headers.link = `</api/v1/scheduler/cooldowns?${next.toString()}>; rel="next"`;
      }
      res.writeHead(200, headers);
      res.end(JSON.stringify(page));
      return;
    }
    if (req.method === 'GET' && path === '/api/v1/audit' && !state.legacy) {
      const limit = Number(q.get('limit') ?? 50);
      return json(res, 200, { entries: state.audit.slice(0, limit), next_cursor: null });
    }
    if (req.method === 'GET' && path === '/api/v1/capacity' && !state.legacy) return json(res, 200, state.capacity);
    if (req.method === 'GET' && path === '/api/v1/scheduler/causes' && !state.legacy) {
      const kind = q.get('kind');
      return json(res, 200, kind ? state.causes.filter((c) => c.kinds.includes(kind)) : state.causes);
    }
    if (req.method === 'GET' && path === '/api/v1/scheduler/policy') {
      return json(res, 200, state.policy);
    }
    if (req.method === 'GET' && path === '/api/v1/stores') {
      const limit = Number(q.get('limit') ?? 50);
      const cursor = q.get('cursor');
      const sorted = [...state.stores].sort((a, b) => (a.name < b.name ? -1 : 1));
      const from = cursor ? sorted.findIndex((s) => s.name > cursor) : 0;
      const page = from < 0 ? [] : sorted.slice(from, from + limit);
      const more = from >= 0 && from + limit < sorted.length;
      const byTarget = new Map<string, Cooldown[]>();
      for (const c of state.cooldowns.values()) byTarget.set(c.target, [...(byTarget.get(c.target) ?? []), c]);
      return json(res, 200, {
        stores: page.map((s) => ({ ...s, cooldowns: byTarget.get(s.name) ?? [] })),
        total: sorted.length,
        next_cursor: more ? page.at(-1)!.name : null,
      });
    }
    if (req.method === 'GET' && path === '/api/v1/tasks') {
      if (state.legacy && q.get('state') === 'held') return json(res, 400, { error: 'state: invalid option' });
      const limit = Number(q.get('limit') ?? 50);
      // `q`: a case-insensitive substring of the store name or the error (a 0.1.0 master ignores it).
      const search = state.legacy ? '' : (q.get('q') ?? '').toLowerCase();
      const match = state.tasks
        .filter(
          (t) =>
            (!q.get('state') || t.state === q.get('state')) &&
            (!q.get('kind') || t.kind === q.get('kind')) &&
            (!q.get('target') || t.target === q.get('target')) &&
            (!search || [t.target, t.error ?? ''].some((x) => x.toLowerCase().includes(search))),
        )
        .sort((a, b) => (a.id < b.id ? 1 : -1));
      return json(res, 200, { tasks: match.slice(0, limit), total: match.length, next_cursor: null });
    }
    if (req.method === 'POST' && path === '/api/v1/tasks') {
      const { kind, target } = JSON.parse(body) as { kind: Task['kind']; target: string };
      const task: Task = {
        id: `01a23766-ffff-7000-8000-${String(state.tasks.length).padStart(12, '0')}`,
        kind,
        target,
        state: 'queued',
        source: 'manual',
        enqueued_at: 1_700_000_000_000,
        attempt: 0,
      };
      state.tasks.push(task);
      return json(res, 202, task);
    }
    const one = /^\/api\/v1\/scheduler\/cooldowns\/([^/]+)\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && one && !state.legacy) {
      const key = cooldownKey(one[1]!, decodeURIComponent(one[2]!));
      const entry = state.cooldowns.get(key) ?? null;
      const timeline = state.timelines.get(key) ?? [];
      if (!entry && timeline.length === 0) return json(res, 404, { error: `nothing known of ${key}` });
      const [kind, target] = [one[1]!, decodeURIComponent(one[2]!)];
      return json(res, 200, { kind, target, entry, policy: state.policy, applies: true, timeline });
    }
    if ((req.method === 'PUT' || req.method === 'DELETE') && path === '/api/v1/scheduler/cooldowns') {
      // A 0.1.0 master has no bulk park, and its bulk reset refuses what it does not know.
      if (state.legacy && req.method === 'PUT') return json(res, 404, { error: `no route for PUT ${path}` });
      for (const name of q.keys()) {
        if (state.legacy ? name !== 'kind' : !['kind', 'state', 'q', 'cause', 'dry_run'].includes(name))
          return json(res, 400, { error: `unknown query parameter '${name}'` });
      }
      const search = (q.get('q') ?? '').toLowerCase();
      const matches = [...state.cooldowns.values()].filter(
        (c) =>
          (!q.get('kind') || c.kind === q.get('kind')) &&
          (!q.get('cause') || c.cause === q.get('cause')) &&
          [c.target, c.last_error].some((x) => x.toLowerCase().includes(search)),
      );
      const dryRun = q.get('dry_run') === 'true';
      if (!dryRun) {
        for (const c of matches) {
          const key = cooldownKey(c.kind, c.target);
          if (req.method === 'DELETE') state.cooldowns.delete(key);
          else {
            const { reason } = JSON.parse(body) as { reason: string };
            state.cooldowns.set(key, {
              ...c,
              parked: park(reason, { parked_at_ms: Date.now() }),
              state: 'parked',
              gating: true,
            });
          }
        }
      }
      const n = matches.length;
      return json(res, 200, { dry_run: dryRun, count: n, done: dryRun ? 0 : n, entries: matches.slice(0, 100) });
    }
    if (req.method === 'DELETE' && one) {
      const key = cooldownKey(one[1]!, decodeURIComponent(one[2]!));
      if (!state.cooldowns.delete(key)) return json(res, 404, { error: 'no cooldown' });
      return json(res, 200, { deleted: 1 });
    }
    if (req.method === 'PUT' && one) {
      const kind = one[1] as Cooldown['kind'];
      const target = decodeURIComponent(one[2]!);
      const { reason } = JSON.parse(body) as { reason?: string };
      if (!reason) return json(res, 400, { error: 'reason: required (1-512 characters)' });
      const key = cooldownKey(kind, target);
      const now = Date.now();
      const parked = park(reason, { parked_at_ms: now });
      const before = state.cooldowns.get(key);
      const entry: Cooldown = before
        ? { ...before, parked, state: 'parked', gating: true }
        : {
            kind,
            target,
            state: 'parked',
            gating: true,
            failures: 0,
            until_ms: null,
            until: null,
            last_error: '',
            parked,
          };
      state.cooldowns.set(key, entry);
      return json(res, 200, entry);
    }
    if (req.method === 'GET' && path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(
        `# TYPE master_cooldown_guard_overflow_total counter\nmaster_cooldown_guard_overflow_total{kind="merge_wal"} ${state.guardOverflow}\nmaster_cooldown_guard_overflow_total{kind="compact"} 0\n`,
      );
      return;
    }
    json(res, 404, { error: `no route for ${req.method} ${path}` });
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    state.requests.push(`${req.method} ${req.url}`);
    if (tls) {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      state.clientNames.push(typeof peer.subject?.CN === 'string' ? peer.subject.CN : '-');
    }
    if (req.method === 'GET' && req.url === '/api/v1/events') {
      if (state.hang) return;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`event: hello\ndata: ${JSON.stringify({ master_id: state.masters[0]?.id ?? 'm' })}\n\n`);
      streams.add(res);
      res.on('close', () => streams.delete(res));
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      if (state.hang) return;
      if (state.delayMs > 0) setTimeout(() => route(req, res, body), state.delayMs);
      else route(req, res, body);
    });
  };
  const server = tls ? createHttpsServer(tls, handle) : createServer(handle);
  server.keepAliveTimeout = 1000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${bound}`,
    port: bound,
    state,
    get clients() {
      return streams.size;
    },
    emit(event) {
      const frame = `event: ${event.type}\nid: ${event.revision}\ndata: ${JSON.stringify(event)}\n\n`;
      for (const s of streams) s.write(frame);
    },
    overflow() {
      for (const s of streams) s.end('event: overflow\ndata: {"error":"client too slow; reconnect"}\n\n');
    },
    dropConnections() {
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
