import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { shutDown } from './shutdown.js';

describe('shutDown', () => {
  it('stops accepting, drains, cuts what is still open, waits for the server, releases, then says stopped', async () => {
    const steps: string[] = [];
    let closeCallback: (() => void) | undefined;
    await shutDown({
      server: {
        close: (cb) => {
          steps.push('close');
          closeCallback = cb;
        },
        closeIdleConnections: () => steps.push('close idle'),
        closeAllConnections: () => {
          steps.push('close all');
          closeCallback?.();
        },
      },
      logger: { info: (message) => steps.push(message) },
      drain: () => {
        steps.push('drain');
        return Promise.resolve();
      },
      release: () => {
        steps.push('release');
        return Promise.resolve();
      },
    });
    expect(steps).toEqual(['close', 'close idle', 'drain', 'close all', 'release', 'stopped']);
  });

  it('lets a request in flight finish while the work drains, and cuts one still open after', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/quick') setTimeout(() => res.end('done'), 50);
      else res.write('streaming'); // never ends, as an event stream
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const quick = fetch(`${base}/quick`).then((r) => r.text());
    const stream = await fetch(`${base}/stream`);
    const cut = stream.text().then(
      () => 'ended',
      () => 'cut',
    );
    await new Promise((r) => setTimeout(r, 10));
    await shutDown({
      server,
      logger: { info: () => undefined },
      drain: () => new Promise((r) => setTimeout(r, 100)),
      release: () => Promise.resolve(),
    });
    expect(await quick).toBe('done');
    expect(await cut).toBe('cut');
    expect(server.listening).toBe(false);
  });
});
