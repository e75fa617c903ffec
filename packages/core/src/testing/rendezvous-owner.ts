import { rendezvousRank } from '../store/rendezvous.js';

/**
 * The member of `members` that owns `id`, as the claimers share out the queue: the one that
 * ranks first for it (the highest weight, ties to the smaller member id). Tests use it to know
 * which master's share a task falls in.
 */
export function rendezvousOwner(id: string, members: readonly string[]): string | undefined {
  return members.find((m) => rendezvousRank(id, members, m) === 0);
}
