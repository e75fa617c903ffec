import { webcrypto } from 'node:crypto';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/**
 * A source of randomness, passed in so that core stays deterministic under test and
 * simulation: ids, retry jitter and tokens all draw from it.
 */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** `n` random bytes. */
  bytes(n: number): Uint8Array;
}

/** Cryptographically strong randomness from the platform, for production wiring. */
export const cryptoRandom: Random = {
  next: () => {
    const buf = new Uint32Array(2);
    webcrypto.getRandomValues(buf);
    // 53 bits: the high 27 bits of one word and 26 of the other, as in Math.random's spec range.
    return ((buf[0]! >>> 5) * 67108864 + (buf[1]! >>> 6)) / 9007199254740992;
  },
  bytes: (n) => webcrypto.getRandomValues(new Uint8Array(n)),
};

/**
 * A seeded, reproducible generator (xoroshiro128+ from pure-rand). Two instances with the same
 * seed produce the same sequence, which is what deterministic simulations need.
 */
export function seededRandom(seed: number): Random {
  const rng = xoroshiro128plus(seed);
  const next = (): number => uniformFloat64(rng);
  return {
    next,
    bytes: (n) => {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = Math.floor(next() * 256);
      return out;
    },
  };
}
