import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { describe, expect, it } from 'vitest';
import { IDLE_KEEP_ALIVE_MS, keepIdleConnections } from './keep-alive.js';

describe('keepIdleConnections', () => {
  it('keeps idle connections longer than clients and load balancers do, on HTTP and HTTPS servers', () => {
    for (const server of [createServer(), createHttpsServer()]) {
      keepIdleConnections(server);
      expect(server.keepAliveTimeout).toBe(IDLE_KEEP_ALIVE_MS);
      expect(IDLE_KEEP_ALIVE_MS).toBeGreaterThan(60_000);
      // Node ends a kept-alive connection at the headers timeout when that is the shorter one.
      expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
      expect(server.requestTimeout).toBeGreaterThanOrEqual(server.headersTimeout);
    }
  });

  it('leaves a server without keep-alive settings as it is', () => {
    const server = {};
    keepIdleConnections(server);
    expect(server).toEqual({});
  });
});
