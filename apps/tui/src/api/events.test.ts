import { FakeClock } from '@maintd/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeMaster, auditEntry, cooldown, startFakeMaster } from '../../test/fake-master.js';
import { type EventStreamOptions, type MaintdEvent, parseMaintdEvent, readEventStream } from './events.js';

/** A fetch that answers the event stream with `chunks`, one read each, then ends it. */
function streaming(chunks: readonly string[]): typeof fetch {
  return () => {
    const bytes = new TextEncoder();
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      pull: (c) => {
        const next = chunks[i++];
        if (next === undefined) c.close();
        else c.enqueue(bytes.encode(next));
      },
    });
    return Promise.resolve(new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
  };
}

/** Settings of a stream read on a clock that only tests move. */
function options(over: Partial<EventStreamOptions> & Pick<EventStreamOptions, 'url'>): EventStreamOptions {
  return {
    connectTimeoutMs: 2000,
    idleTimeoutMs: 5000,
    clock: new FakeClock(),
    signal: new AbortController().signal,
    ...over,
  };
}

describe('parseMaintdEvent', () => {
  it('accepts the master’s three event shapes', () => {
    const c = cooldown('a');
    expect(
      parseMaintdEvent(JSON.stringify({ type: 'cooldown', revision: 3, kind: 'merge_wal', target: 'a', cooldown: c })),
    ).toEqual({ type: 'cooldown', revision: 3, kind: 'merge_wal', target: 'a', cooldown: c });
    expect(parseMaintdEvent('{"type":"task_deleted","revision":4,"id":"x"}')).toEqual({
      type: 'task_deleted',
      revision: 4,
      id: 'x',
    });
  });

  it('accepts a timeline event, of a type a later release may add, its text sanitised', () => {
    const event = {
      id: '01a23766-0000-7000-8000-000000000001',
      kind: 'merge_wal',
      target: 'a',
      type: 'quarantined',
      at_ms: 1_700_000_000_000,
      at: '2023-11-14T22:13:20.000Z',
      reason: 'bad\u001b[2J disk',
    };
    expect(parseMaintdEvent(JSON.stringify({ type: 'timeline', revision: 8, event }))).toEqual({
      type: 'timeline',
      revision: 8,
      event: { ...event, reason: 'bad disk' },
    });
    expect(parseMaintdEvent(JSON.stringify({ type: 'timeline', revision: 9, event: { id: 'x' } }))).toBeUndefined();
  });

  it('accepts an audit event, its fields of a later release kept and its text sanitised', () => {
    const entry = { ...auditEntry(), reason: 'disk\u001b]0;owned\u0007 swap', ticket: 'OPS-1' };
    expect(parseMaintdEvent(JSON.stringify({ type: 'audit', revision: 9, entry }))).toEqual({
      type: 'audit',
      revision: 9,
      entry: { ...entry, reason: 'disk swap' },
    });
    // The payload under `event`, as a timeline event names it; the revision may be absent.
    expect(parseMaintdEvent(JSON.stringify({ type: 'audit', event: entry }))).toEqual({
      type: 'audit',
      revision: undefined,
      entry: { ...entry, reason: 'disk swap' },
    });
  });

  it('accepts an audit entry with only its id, time, who and action, and drops one without them', () => {
    const minimal = { id: 'x', at_ms: 1, who: 'anonymous', action: 'frobnicate.all' };
    expect(parseMaintdEvent(JSON.stringify({ type: 'audit', entry: minimal }))?.type).toBe('audit');
    for (const missing of ['id', 'at_ms', 'who', 'action']) {
      const entry: Record<string, unknown> = { ...minimal };
      delete entry[missing];
      expect(parseMaintdEvent(JSON.stringify({ type: 'audit', entry })), missing).toBeUndefined();
    }
    expect(parseMaintdEvent('{"type":"audit"}')).toBeUndefined();
    expect(
      parseMaintdEvent('{"type":"audit","entry":{"id":"x","at_ms":"soon","who":"a","action":"b"}}'),
    ).toBeUndefined();
  });

  it('accepts a cooldown without gating, as a master that predates it sends it', () => {
    const { gating: _gating, ...c } = cooldown('a');
    expect(
      parseMaintdEvent(JSON.stringify({ type: 'cooldown', revision: 3, kind: 'merge_wal', target: 'a', cooldown: c })),
    ).toEqual({ type: 'cooldown', revision: 3, kind: 'merge_wal', target: 'a', cooldown: c });
  });

  it('accepts every kind the master knows, index_id included', () => {
    const c = cooldown('a', { kind: 'index_id' });
    expect(
      parseMaintdEvent(JSON.stringify({ type: 'cooldown', revision: 5, kind: 'index_id', target: 'a', cooldown: c })),
    ).toEqual({ type: 'cooldown', revision: 5, kind: 'index_id', target: 'a', cooldown: c });
  });

  it('accepts a kind no release of the dashboard was built with, and drops a malformed kind', () => {
    const c = cooldown('a', { kind: 'repair' });
    expect(
      parseMaintdEvent(JSON.stringify({ type: 'cooldown', revision: 6, kind: 'repair', target: 'a', cooldown: c })),
    ).toEqual({ type: 'cooldown', revision: 6, kind: 'repair', target: 'a', cooldown: c });
    const bad = { ...c, kind: 'Re-pair' };
    expect(
      parseMaintdEvent(JSON.stringify({ type: 'cooldown', revision: 7, kind: 'Re-pair', target: 'a', cooldown: bad })),
    ).toBeUndefined();
  });

  it('drops malformed events instead of letting them corrupt the screen', () => {
    expect(parseMaintdEvent('not json')).toBeUndefined();
    expect(parseMaintdEvent('{"type":"task","revision":1,"task":{"id":"x"}}')).toBeUndefined();
    expect(parseMaintdEvent('{"type":"weird","revision":1}')).toBeUndefined();
  });

  it('sanitises the text in events', () => {
    const c = cooldown('a', { last_error: 'boom\u001b[2J\u0007!' });
    const e = parseMaintdEvent(
      JSON.stringify({ type: 'cooldown', revision: 1, kind: 'merge_wal', target: 'a', cooldown: c }),
    );
    expect(e?.type === 'cooldown' && e.cooldown?.last_error).toBe('boom!');
  });
});

describe('readEventStream', () => {
  let fake: FakeMaster | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('reports hello, then every event, and ends with "overflow" when the master cuts a slow client', async () => {
    fake = await startFakeMaster();
    const events: MaintdEvent[] = [];
    let opened: string | undefined;
    const done = readEventStream(options({ url: fake.url }), {
      onOpen: (id) => {
        opened = id;
        fake!.emit({ type: 'cooldown', revision: 1, kind: 'merge_wal', target: 'a', cooldown: cooldown('a') });
        fake!.emit({ type: 'task_deleted', revision: 2, id: 'gone' });
        setTimeout(() => fake!.overflow(), 50);
      },
      onEvent: (e) => events.push(e),
    });
    await expect(done).resolves.toBe('overflow');
    expect(opened).toBe('master-a');
    expect(events.map((e) => e.revision)).toEqual([1, 2]);
  });

  it('reads events split anywhere across chunks, with CRLF, CR or LF line ends, skipping comments and unknown fields', async () => {
    const deleted = (n: number): string => `{"type":"task_deleted","revision":${n},"id":"t${n}"}`;
    const text =
      `event: hello\r\ndata: {"master_id":"m1"}\r\n\r\n: keepalive\n\nretry: 5\nfoo: bar\n\n` +
      `event: task_deleted\rid: 7\rdata: ${deleted(7)}\r\r` +
      `data: ${deleted(8)}\n\nevent: cooldown\ndata: not json\n\n`;
    for (let cut = 0; cut <= text.length; cut += 3) {
      const events: MaintdEvent[] = [];
      let opened: string | undefined;
      const end = await readEventStream(
        options({ url: 'http://master', fetch: streaming([text.slice(0, cut), text.slice(cut)]) }),
        { onOpen: (id) => (opened = id), onEvent: (e) => events.push(e) },
      );
      expect(end).toBe('closed');
      expect(opened).toBe('m1');
      // The unnamed event is the default `message` type and still parsed; malformed data is dropped.
      expect(events.map((e) => e.revision)).toEqual([7, 8]);
    }
  });

  it('fails when the stream goes silent for the idle timeout (a half-open connection), and not a moment before', async () => {
    fake = await startFakeMaster();
    const clock = new FakeClock();
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    let settled = false;
    const done = readEventStream(options({ url: fake.url, idleTimeoutMs: 40_000, clock }), {
      onOpen: () => open(),
      onEvent: () => undefined,
    }).finally(() => (settled = true));
    done.catch(() => undefined);
    await opened;
    await clock.advance(39_999);
    expect(settled).toBe(false);
    await clock.advance(1);
    await expect(done).rejects.toThrow(/no data/);
  });

  it('fails when the connection breaks, and resolves "aborted" when stopped', async () => {
    fake = await startFakeMaster();
    const broken = readEventStream(options({ url: fake.url }), {
      onOpen: () => setTimeout(() => fake!.dropConnections(), 20),
      onEvent: () => undefined,
    });
    await expect(broken).rejects.toThrow();
    const stop = new AbortController();
    const stopped = readEventStream(options({ url: fake.url, signal: stop.signal }), {
      onOpen: () => stop.abort(),
      onEvent: () => undefined,
    });
    await expect(stopped).resolves.toBe('aborted');
  });
});
