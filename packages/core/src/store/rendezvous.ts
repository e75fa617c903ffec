/**
 * Rendezvous (highest-random-weight) hashing of queued tasks over the live masters: every master
 * computes the same owner for a task from the same member list, with no coordination, and a
 * master joining or leaving moves only the tasks it wins or held.
 */

/** 32-bit FNV-1a of `a`, a NUL, then `b`: cheap, and spread well enough to split a queue. */
function weight(a: string, b: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < a.length; i++) h = Math.imul(h ^ a.charCodeAt(i), 0x01000193);
  h = Math.imul(h, 0x01000193); // the NUL separator
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b.charCodeAt(i), 0x01000193);
  // FNV's low bits mix poorly for keys that differ only at the end (UUIDv7s of one millisecond).
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/**
 * Where `member` stands among `members` for `id`: 0 for its owner, 1 for the member that would
 * own it were the owner gone, and so on: highest weight first, ties to the smaller member id.
 * Masters that take work outside their share take first the tasks they rank next for, so
 * that each of them reaches for a different part of another's share.
 */
export function rendezvousRank(id: string, members: readonly string[], member: string): number {
  const own = weight(member, id);
  let rank = 0;
  for (const m of members) {
    if (m === member) continue;
    const w = weight(m, id);
    if (w > own || (w === own && m < member)) rank++;
  }
  return rank;
}
