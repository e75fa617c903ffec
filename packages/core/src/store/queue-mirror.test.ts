import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QueueMirror } from './queue-mirror.js';

const PREFIX = '/p/queue/';
const put = (id: string, modRevision: number, kind = 'compact') =>
  ({ type: 'put', key: `${PREFIX}${kind}/${id}`, modRevision }) as const;
const del = (id: string, modRevision: number, kind = 'compact') =>
  ({ type: 'delete', key: `${PREFIX}${kind}/${id}`, modRevision }) as const;

describe('QueueMirror', () => {
  it('has no head until a page read while the feed is live is adopted', () => {
    const m = new QueueMirror(PREFIX);
    m.adopt('compact', ['a'], true, 5, m.epoch, 0);
    expect(m.head('compact', 0)).toBeUndefined();
    m.setLive(true);
    expect(m.head('compact', 0)).toBeUndefined();
    m.adopt('compact', ['a'], true, 5, m.epoch, 0);
    expect(m.head('compact', 0)).toEqual({ ids: ['a'], complete: true, halved: false });
  });

  it('applies changes after the page revision and ignores those it already holds', () => {
    const m = new QueueMirror(PREFIX);
    m.setLive(true);
    m.adopt('compact', ['b'], true, 10, m.epoch, 0);
    m.apply([del('b', 9), put('a', 10), put('c', 11), put('x', 12, 'merge_wal')]);
    expect(m.head('compact', 0)?.ids).toEqual(['b', 'c']);
    m.apply([del('b', 13)]);
    expect(m.head('compact', 0)?.ids).toEqual(['c']);
  });

  it('replays onto a page the changes that raced its read', () => {
    const m = new QueueMirror(PREFIX);
    m.setLive(true);
    const epoch = m.epoch;
    m.apply([put('b', 7), put('c', 8)]);
    m.adopt('compact', ['a', 'b'], true, 7, epoch, 0);
    expect(m.head('compact', 0)?.ids).toEqual(['a', 'b', 'c']);
  });

  it('does not adopt a page whose read began before the feed was (re)established', () => {
    const m = new QueueMirror(PREFIX);
    const before = m.epoch;
    m.setLive(true);
    m.adopt('compact', ['a'], true, 5, before, 0);
    expect(m.head('compact', 0)).toBeUndefined();
  });

  it('forgets everything when the feed is lost', () => {
    const m = new QueueMirror(PREFIX);
    m.setLive(true);
    m.adopt('compact', ['a'], true, 5, m.epoch, 0);
    m.setLive(false);
    expect(m.head('compact', 0)).toBeUndefined();
  });

  it('leaves ids past a partial page to the pages not read, and drops the page once drained', () => {
    const m = new QueueMirror(PREFIX);
    m.setLive(true);
    m.adopt('compact', ['a', 'c'], false, 5, m.epoch, 0);
    m.apply([put('b', 6), put('d', 7)]);
    expect(m.head('compact', 0)).toEqual({ ids: ['a', 'b', 'c'], complete: false, halved: false });
    m.apply([del('a', 8), del('b', 9), del('c', 10)]);
    expect(m.head('compact', 0)).toBeUndefined();
  });

  it('says when claims since the read took half of the page, and forgets a page when told', () => {
    const m = new QueueMirror(PREFIX);
    m.setLive(true);
    m.adopt('compact', ['a', 'b', 'c', 'd'], false, 5, m.epoch, 0);
    m.apply([del('a', 6)]);
    expect(m.head('compact', 0)?.halved).toBe(false);
    m.apply([del('b', 7)]);
    expect(m.head('compact', 0)).toEqual({ ids: ['c', 'd'], complete: false, halved: true });
    m.forget('compact');
    expect(m.head('compact', 0)).toBeUndefined();
  });

  it('reads again once a page is older than its time to live', () => {
    const m = new QueueMirror(PREFIX);
    m.setLive(true);
    m.adopt('compact', ['a'], true, 5, m.epoch, 0);
    expect(m.head('compact', 9_999)).toBeDefined();
    expect(m.head('compact', 10_000)).toBeUndefined();
  });

  it('keeps a claimed task out when the watch reports its enqueue after the claim', () => {
    const m = new QueueMirror(PREFIX);
    m.setLive(true);
    m.adopt('compact', [], true, 5, m.epoch, 0);
    m.apply([put('a', 6)]);
    m.apply([del('a', 7)]);
    m.apply([put('a', 6)]);
    expect(m.head('compact', 0)?.ids).toEqual([]);
  });

  it('mirrors the queue exactly, whenever its page is read and however local notes interleave with the watch', () => {
    const op = fc.record({ id: fc.integer({ min: 0, max: 9 }), put: fc.boolean(), local: fc.boolean() });
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 60 }),
        fc.nat(60),
        fc.array(fc.nat(60), { maxLength: 20 }),
        (ops, readAt, lags) => {
          const m = new QueueMirror(PREFIX);
          m.setLive(true);
          const queue = new Set<string>();
          const log: ReturnType<typeof put | typeof del>[] = [];
          let revision = 1;
          let delivered = 0;
          // The watch delivers the log in order, a few changes behind; a local note comes at once.
          const deliver = (upTo: number): void => {
            while (delivered < Math.min(upTo, log.length)) m.apply([log[delivered++]!]);
          };
          let adoptedPage: { ids: string[]; revision: number; epoch: number } | undefined;
          ops.forEach((o, i) => {
            if (i === readAt) adoptedPage = { ids: [...queue].sort(), revision, epoch: m.epoch };
            const id = `t${o.id}`;
            if (o.put === queue.has(id)) return;
            revision++;
            const change = o.put ? put(id, revision) : del(id, revision);
            if (o.put) queue.add(id);
            else queue.delete(id);
            log.push(change);
            if (o.local) m.apply([change]);
            deliver(log.length - ((lags[i % Math.max(1, lags.length)] ?? 0) % 4));
            if (adoptedPage && i === readAt + ((lags[0] ?? 0) % 3)) {
              m.adopt('compact', adoptedPage.ids, true, adoptedPage.revision, adoptedPage.epoch, 0);
            }
          });
          if (!adoptedPage) adoptedPage = { ids: [...queue].sort(), revision, epoch: m.epoch };
          if (!m.head('compact', 0))
            m.adopt('compact', adoptedPage.ids, true, adoptedPage.revision, adoptedPage.epoch, 0);
          deliver(log.length);
          expect(m.head('compact', 0)?.ids).toEqual([...queue].sort());
        },
      ),
    );
  });
});
