import { afterEach, describe, expect, it } from 'vitest';
import { type FakeMaster, cooldown, startFakeMaster } from '../../test/fake-master.js';
import { type MaintdEvent, SseParser, parseMaintdEvent, readEventStream } from './events.js';

describe('SseParser', () => {
  it('parses events split at any point across chunks', () => {
    const text = 'event: task\nid: 7\ndata: {"a":1}\n\n: keepalive\n\nevent: cooldown\ndata: x\n\n';
    for (let cut = 0; cut <= text.length; cut++) {
      const p = new SseParser();
      const out = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
      expect(out).toEqual([
        { event: 'task', data: '{"a":1}', id: '7' },
        { event: 'cooldown', data: 'x', id: '7' },
      ]);
    }
  });

  it('joins multi-line data, accepts CRLF and CR line ends, and defaults the event name', () => {
    const p = new SseParser();
    expect(p.push('data: a\r\ndata:b\r')).toEqual([]);
    expect(p.push('\n\r\n')).toEqual([{ event: 'message', data: 'a\nb', id: undefined }]);
    expect(p.push('data: c\r\r')).toEqual([{ event: 'message', data: 'c', id: undefined }]);
  });

  it('ignores comments, unknown fields and events without data', () => {
    const p = new SseParser();
    expect(p.push(': keepalive\n\nretry: 5\nfoo: bar\n\nevent: hello\n\n')).toEqual([]);
  });
});

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
    const done = readEventStream(
      { url: fake.url, connectTimeoutMs: 2000, idleTimeoutMs: 5000, signal: new AbortController().signal },
      {
        onOpen: (id) => {
          opened = id;
          fake!.emit({ type: 'cooldown', revision: 1, kind: 'merge_wal', target: 'a', cooldown: cooldown('a') });
          fake!.emit({ type: 'task_deleted', revision: 2, id: 'gone' });
          setTimeout(() => fake!.overflow(), 50);
        },
        onEvent: (e) => events.push(e),
      },
    );
    await expect(done).resolves.toBe('overflow');
    expect(opened).toBe('master-a');
    expect(events.map((e) => e.revision)).toEqual([1, 2]);
  });

  it('fails when the stream goes silent for longer than the idle timeout (a half-open connection)', async () => {
    fake = await startFakeMaster();
    const started = performance.now();
    await expect(
      readEventStream(
        { url: fake.url, connectTimeoutMs: 2000, idleTimeoutMs: 200, signal: new AbortController().signal },
        { onOpen: () => undefined, onEvent: () => undefined },
      ),
    ).rejects.toThrow(/no data/);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('fails when the connection breaks, and resolves "aborted" when stopped', async () => {
    fake = await startFakeMaster();
    const broken = readEventStream(
      { url: fake.url, connectTimeoutMs: 2000, idleTimeoutMs: 5000, signal: new AbortController().signal },
      { onOpen: () => setTimeout(() => fake!.dropConnections(), 20), onEvent: () => undefined },
    );
    await expect(broken).rejects.toThrow();
    const stop = new AbortController();
    const stopped = readEventStream(
      { url: fake.url, connectTimeoutMs: 2000, idleTimeoutMs: 5000, signal: stop.signal },
      { onOpen: () => stop.abort(), onEvent: () => undefined },
    );
    await expect(stopped).resolves.toBe('aborted');
  });
});
