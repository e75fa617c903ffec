/** The five views, in key order (`1`–`5`). */
export const VIEW_IDS = ['overview', 'tasks', 'cooldowns', 'stores', 'workers'] as const;
/** A view. */
export type ViewId = (typeof VIEW_IDS)[number];
/** The views that are lists (all but the Overview). */
export type ListViewId = Exclude<ViewId, 'overview'>;
/** Tab titles. */
export const VIEW_TITLES: Record<ViewId, string> = {
  overview: 'Overview',
  tasks: 'Tasks',
  cooldowns: 'Cooldowns',
  stores: 'Stores',
  workers: 'Workers',
};
