import type { Task } from '../src/api/types.js';
import { pruneTasks } from '../src/state/fleet.js';
import { LiveMap } from '../src/state/live-map.js';

/** Tasks as a live map by id, pruned to `MAX_TASKS`, as the feed keeps them. */
export function taskMap(list: Iterable<Task>): LiveMap<Task> {
  const m = new LiveMap<Task>();
  for (const t of list) m.set(t.id, t);
  return pruneTasks(m);
}
