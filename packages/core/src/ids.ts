import { v7 } from 'uuid';
import type { Clock } from './clock.js';
import type { Random } from './random.js';

/**
 * Returns a UUIDv7 generator over the injected clock and randomness. Ids are strictly
 * increasing per generator, even within one millisecond, so lexical order is enqueue order.
 */
export function createIdGenerator(clock: Clock, random: Random): () => string {
  let msecs = -Infinity;
  let seq = 0;
  return () => {
    const rnds = random.bytes(16);
    const now = clock.now();
    if (now > msecs) {
      msecs = now;
      // Start the 31-bit counter at a random point in its lower half, leaving room to count up.
      seq = ((rnds[6]! & 0x3f) << 24) | (rnds[7]! << 16) | (rnds[8]! << 8) | rnds[9]!;
    } else {
      seq = (seq + 1) | 0;
      if (seq === 0) msecs++;
    }
    return v7({ msecs, seq, random: rnds });
  };
}
