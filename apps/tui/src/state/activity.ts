/**
 * The Overview's activity log: the audit trail's entries (who did what, from the master), the
 * parks and releases the stream shows, and the operator's own actions. One action can be seen
 * all three ways; each is shown once (docs/ARCHITECTURE.md §4).
 */

/** Where an activity line comes from, and what it names, so the same action is told apart. */
export interface ActivitySubject {
  /** `audit`: an entry of the master's audit trail; `park`: a park or release seen in the data; `own`: this dashboard's action. */
  readonly source: 'audit' | 'park' | 'own';
  /** What it acted on, e.g. `cooldown merge_wal/store-12` (see `state/audit-lines.ts`); an own action: one per item. */
  readonly keys: readonly string[];
  /** An audit entry's id: a bulk action's entry comes again, its count growing, with each store it commits. */
  readonly id?: string | undefined;
  /** Who: an audit entry's `who@client`, a park's `by`. */
  readonly by?: string | undefined;
  /** An audit entry's action, e.g. `cooldowns.park`. */
  readonly action?: string | undefined;
  /** A park's reason. */
  readonly reason?: string | undefined;
  /** An audit line's text after who: marked as this dashboard's, it reads `<by> (you) <phrase>`. */
  readonly phrase?: string | undefined;
}

/** A line of the activity log. */
export interface Activity {
  /** When it happened, epoch ms. */
  readonly at: number;
  readonly text: string;
  readonly tone: 'ok' | 'bad' | 'info' | 'warn';
  readonly subject?: ActivitySubject | undefined;
}

/** Most activity lines kept. */
export const MAX_ACTIVITY = 50;

/**
 * How far apart in time two lines about the same thing may be and still be one action: an audit
 * entry is stamped by the master's clock when it commits, this dashboard's own line by its own
 * clock when the answer came.
 */
export const SAME_ACTION_MS = 120_000;

const near = (a: Activity, b: Activity): boolean => Math.abs(a.at - b.at) <= SAME_ACTION_MS;
const sharesKey = (a: ActivitySubject, b: ActivitySubject): boolean => a.keys.some((k) => b.keys.includes(k));

/**
 * Whether an audit line says what a park note says: the same pair at about the same time, or a
 * bulk park's every park (the same `who@client` as the park's `by`, the same reason).
 */
function covers(audit: Activity, note: Activity): boolean {
  const a = audit.subject;
  const n = note.subject;
  if (a?.source !== 'audit' || n?.source !== 'park' || !near(audit, note)) return false;
  if (sharesKey(a, n)) return true;
  return a.action === 'cooldowns.park' && sameOperator(a.by, n.by) && a.reason === n.reason;
}

/**
 * Whether an audit entry's `who@client` and a park's `by` name the same operator: a park made
 * without a token names the client address alone, where the entry says `anonymous@<address>`
 * (docs/ARCHITECTURE.md §3.4).
 */
function sameOperator(audit: string | undefined, park: string | undefined): boolean {
  if (audit === undefined || park === undefined) return false;
  return audit === park || audit === `anonymous@${park}`;
}

/**
 * The activity log with `more` appended, bounded: an audit entry seen before (a bulk action's,
 * its count grown) replaces its line in place, and a park note that an audit line covers is
 * dropped, whichever came first.
 */
export function appendActivity(log: readonly Activity[], more: readonly Activity[]): readonly Activity[] {
  if (more.length === 0) return log;
  let out = [...log];
  let changed = false;
  for (const line of more) {
    const s = line.subject;
    if (s?.source === 'audit') {
      const at = s.id === undefined ? -1 : out.findIndex((l) => l.subject?.source === 'audit' && l.subject.id === s.id);
      if (at >= 0) {
        // A re-read brings the entries the stream already did: the same line changes nothing.
        if (out[at]!.text === line.text) continue;
        out[at] = line;
      } else {
        out = out.filter((l) => !covers(line, l));
        out.push(line);
      }
      changed = true;
    } else if (s?.source !== 'park' || !out.some((l) => covers(l, line))) {
      out.push(line);
      changed = true;
    }
  }
  return changed ? out.slice(-MAX_ACTIVITY) : log;
}

/**
 * The log in time order (itself when it is): entries read from the trail after a gap in the
 * stream are older than lines that arrived since.
 */
export function inTimeOrder(log: readonly Activity[]): readonly Activity[] {
  for (let i = 1; i < log.length; i++) {
    if (log[i]!.at < log[i - 1]!.at) return [...log].sort((a, b) => a.at - b.at);
  }
  return log;
}

/**
 * How far apart the audit entries of one request may be: the `DELETE` of one pair commits its
 * reset and its release in two transactions, each with its entry.
 */
const ONE_REQUEST_MS = 1000;

/**
 * The stream's log with this dashboard's own actions, in time order: the audit lines of one of
 * them are marked `(you)`, and an own line whose every item the audit trail recorded is left out
 * (the audit lines say it, with who the master took the dashboard for); a failed one always
 * stays. Of the lines that name what an own action did (say `park merge_wal/store-12`) within
 * {@link SAME_ACTION_MS}, the one nearest to it in time is its own (with any entry of the same
 * request beside it), not an earlier park of the same pair by someone else. A master without an
 * audit trail leaves both as they are.
 */
export function withOwnActivity(stream: readonly Activity[], own: readonly Activity[]): readonly Activity[] {
  if (own.length === 0) return stream;
  const mine = new Set<Activity>();
  const recorded = new Set<Activity>();
  for (const o of own) {
    if (o.subject?.source !== 'own' || o.subject.keys.length === 0) continue;
    let all = true;
    for (const k of o.subject.keys) {
      const candidates = stream.filter(
        (l) => l.subject?.source === 'audit' && l.subject.keys.includes(k) && near(l, o),
      );
      if (candidates.length === 0) {
        all = false;
        continue;
      }
      const distance = (l: Activity): number => Math.abs(l.at - o.at);
      const best = candidates.reduce((a, b) => (distance(b) < distance(a) ? b : a));
      for (const l of candidates) if (Math.abs(l.at - best.at) <= ONE_REQUEST_MS) mine.add(l);
    }
    if (all && o.tone !== 'bad') recorded.add(o);
  }
  if (mine.size === 0) return mergeInOrder(stream, own);
  const lines = stream.map((l) =>
    mine.has(l) && l.subject?.phrase !== undefined
      ? { ...l, text: `${l.subject.by ?? ''} (you) ${l.subject.phrase}` }
      : l,
  );
  return mergeInOrder(
    lines,
    own.filter((o) => !recorded.has(o)),
  );
}

function mergeInOrder(stream: readonly Activity[], own: readonly Activity[]): readonly Activity[] {
  if (own.length === 0) return stream;
  return [...stream, ...own].sort((a, b) => a.at - b.at).slice(-MAX_ACTIVITY);
}
