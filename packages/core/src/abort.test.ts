import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { whenAborted } from './abort.js';

const settled = async (p: Promise<void>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('whenAborted', () => {
  it('resolves at once for a signal aborted before the call', async () => {
    const a = new AbortController();
    a.abort();
    expect(await settled(whenAborted(new AbortController().signal, a.signal))).toBe(true);
  });

  it('waits until one of its signals is aborted, then resolves', async () => {
    const a = new AbortController();
    const b = new AbortController();
    const p = whenAborted(a.signal, b.signal);
    expect(await settled(p)).toBe(false);
    b.abort();
    expect(await settled(p)).toBe(true);
  });

  it('leaves no listener on the other signals once it resolved', async () => {
    const a = new AbortController();
    const b = new AbortController();
    const p = whenAborted(a.signal, b.signal);
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(1);
    a.abort();
    await p;
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
  });
});
