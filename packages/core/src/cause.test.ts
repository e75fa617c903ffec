import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { failureCause, normaliseError } from './cause.js';

const hexId = fc.stringMatching(/^[0-9a-f]{16}$/).filter((s) => /\d/.test(s));
const store = fc.stringMatching(/^[a-z][a-z0-9_-]{2,20}$/);

describe('failure causes', () => {
  it('gives stores failing on a missing fragment one cause, whatever the fragment and store', () => {
    fc.assert(
      fc.property(store, store, hexId, hexId, (a, b, fa, fb) => {
        const ea = `500 Not found: s3://lake/${a}/data/${fa}.lance (merged 0 generations across 0/8 workers; 7 more errors)`;
        const eb = `500 Not found: s3://lake/${b}/data/${fb}.lance (merged 0 generations across 0/8 workers; 3 more errors)`;
        expect(failureCause(ea, a)).toBe(failureCause(eb, b));
      }),
    );
  });

  it('takes UUIDs, hex ids and numbers out of the text', () => {
    expect(normaliseError('task 0193a4b2-7c1d-7e2f-8a9b-0c1d2e3f4a5b timed out after 60 s on 10.0.0.5:8080')).toBe(
      'task <uuid> timed out after # s on #.#.#.#:#',
    );
    expect(normaliseError('commit conflict at version 4711, manifest deadbeef0042')).toBe(
      'commit conflict at version #, manifest <hex>',
    );
  });

  it('keeps the words of a path and replaces the segments that vary', () => {
    expect(normaliseError('Not found: /srv/data/orders/_versions/17.manifest')).toBe(
      'Not found: /srv/data/orders/_versions/*.manifest',
    );
  });

  it("replaces the store's own name only where it stands as a whole name", () => {
    expect(normaliseError('store a: a bad manifest', 'a')).toBe('store <store>: <store> bad manifest');
    expect(normaliseError('table abc is locked', 'a')).toBe('table abc is locked');
    expect(normaliseError('store x.y (x.y+1) failed', 'x.y')).toBe('store <store> (<store>+#) failed');
  });

  it('tells different errors apart', () => {
    expect(failureCause('Not found: /d/1.lance')).not.toBe(failureCause('permission denied: /d/1.lance'));
    expect(failureCause('worker timed out')).not.toBe(failureCause('worker refused the connection'));
  });

  it('is a short lowercase hex id, the same for the same text', () => {
    fc.assert(
      fc.property(fc.string(), (e) => {
        const c = failureCause(e);
        expect(c).toMatch(/^[0-9a-f]{12}$/);
        expect(failureCause(e)).toBe(c);
      }),
    );
  });

  it('pins the id of a known error, so that a change of normalisation is a deliberate one', () => {
    expect(failureCause('Not found: s3://lake/orders/data/4f1c2a9be0.lance', 'orders')).toBe(
      failureCause('Not found: s3://lake/<store>/data/*.lance'),
    );
  });
});
