import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keysFor, parsePairKey } from './keys.js';

const prefix = fc.constantFrom('/maintd', '/maintd/', '/test/a-b', '');
const kind = fc.stringMatching(/^[a-z][a-z0-9_]{0,62}$/);
// Any well-formed text: keys hold a target's UTF-8 bytes, so nothing about its characters matters.
const target = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 });

describe('parsePairKey', () => {
  it('parses back the pair of every per-pair key keysFor builds', () => {
    fc.assert(
      fc.property(prefix, kind, target, (p, k, t) => {
        const keys = keysFor(p);
        const pair = { kind: k, target: t };
        expect(parsePairKey(keys.cooldownPrefix(), keys.cooldown(k, t))).toEqual(pair);
        expect(parsePairKey(keys.parkedPrefix(), keys.parked(k, t))).toEqual(pair);
        expect(parsePairKey(keys.dedupePrefix, keys.dedupe(k, t))).toEqual(pair);
        const held = keys.held(k, t, 'id');
        expect(parsePairKey(keys.heldPrefix(), held.slice(0, held.lastIndexOf('/')))).toEqual(pair);
        const event = keys.timeline(k, t, 'id');
        expect(parsePairKey(keys.timelinePrefix(), event.slice(0, event.lastIndexOf('/')))).toEqual(pair);
      }),
    );
  });

  it('returns undefined for any key that is not a pair key of the section', () => {
    const keys = keysFor('/maintd');
    const section = keys.cooldownPrefix();
    fc.assert(
      fc.property(fc.string(), (rest) => {
        const parsed = parsePairKey(section, `${section}${rest}`);
        // Whatever parses is exactly what keysFor would build for it.
        if (parsed) expect(keys.cooldown(parsed.kind, parsed.target)).toBe(`${section}${rest}`);
      }),
    );
    for (const key of [
      `${section}`,
      `${section}merge_wal`,
      `${section}merge_wal/`,
      `${section}Merge/6869`,
      `${section}merge_wal/6869/extra`,
      `${section}merge_wal/686`,
      `${section}merge_wal/6G69`,
      `${section}merge_wal/6869AB`,
      `${section}merge_wal/ff`,
      `${keys.parkedPrefix()}merge_wal/6869`,
      'merge_wal/6869',
    ]) {
      expect(parsePairKey(section, key), key).toBeUndefined();
    }
  });
});
