/**
 * A task's key in the aggregate's map, and what the key layout tells about the task without its
 * record. Task ids are UUIDv7s (docs/ARCHITECTURE.md §2.1): their first 48 bits are the
 * millisecond they were made, at enqueue, so a queued task's age needs no decoding of its value.
 */

/** Length of a task id in its key: a UUID in 8-4-4-4-12 lowercase hex. */
const UUID_LENGTH = 36;
/** Bytes of a UUID, and characters of the map key made from them. */
const ID_BYTES = 16;
/** Marks a map key made from a whole task key (one not ending in a UUID): no latin1 string has it. */
const WHOLE_KEY = '\u0100';

/**
 * The map key of a task: its UUID's 16 bytes as a latin1 string when the key ends in one (a
 * third of the key's text, and bytes sort like the hex they came from), else the whole key,
 * marked with a character no latin1 string has so the two forms never collide. Parsed by hand:
 * a sync runs this once per task, and the result string is its only allocation.
 */
export function taskMapKey(key: string, prefixLength: number): string {
  if (key.length - prefixLength !== UUID_LENGTH) return `${WHOLE_KEY}${key}`;
  const b = ID_BYTE_SCRATCH;
  let at = prefixLength;
  for (let i = 0; i < ID_BYTES; i++) {
    // Dashes sit after bytes 4, 6, 8 and 10.
    if (i === 4 || i === 6 || i === 8 || i === 10) {
      if (key.charCodeAt(at) !== 45) return `${WHOLE_KEY}${key}`;
      at++;
    }
    const hi = hexDigit(key.charCodeAt(at));
    const lo = hexDigit(key.charCodeAt(at + 1));
    if (hi < 0 || lo < 0) return `${WHOLE_KEY}${key}`;
    b[i] = hi * 16 + lo;
    at += 2;
  }
  // Sixteen arguments rather than a spread: no array is made for each of a sync's tasks.
  return String.fromCharCode(
    b[0]!,
    b[1]!,
    b[2]!,
    b[3]!,
    b[4]!,
    b[5]!,
    b[6]!,
    b[7]!,
    b[8]!,
    b[9]!,
    b[10]!,
    b[11]!,
    b[12]!,
    b[13]!,
    b[14]!,
    b[15]!,
  );
}

/** Reused by {@link taskMapKey}: the aggregate is only touched from one thread. */
const ID_BYTE_SCRATCH = new Uint8Array(ID_BYTES);

/** The value of a lowercase hex digit's char code, or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/**
 * The millisecond a UUIDv7 map key was made (its first 48 bits), or undefined for any other id:
 * a whole key, or a UUID of another version, whose bits are no time.
 */
export function uuidV7Ms(mapKey: string): number | undefined {
  if (mapKey.length !== ID_BYTES || mapKey.startsWith(WHOLE_KEY) || mapKey.charCodeAt(6) >> 4 !== 7) return undefined;
  let ms = 0;
  for (let i = 0; i < 6; i++) ms = ms * 256 + mapKey.charCodeAt(i);
  return ms;
}
