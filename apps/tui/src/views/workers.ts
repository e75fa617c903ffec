import type { Worker } from '../api/types.js';
import { formatAgo, formatCount } from '../format.js';
import { keyedRows } from '../state/sorted-index.js';
import type { Tone } from '../theme.js';
import { type ListSpec, byText } from './list-spec.js';

/** A worker's health: ok, failing or unknown (not scanned yet). */
export function workerHealth(w: Worker): { text: string; tone: Tone } {
  if (w.ok === null) return { text: 'unknown', tone: 'muted' };
  return w.ok ? { text: 'ok', tone: 'ok' } : { text: 'failing', tone: 'bad' };
}

const HEALTH_ORDER = (w: Worker): number => (w.ok === false ? 0 : w.ok === null ? 1 : 2);

/** The Workers view: each endpoint's last scan. */
export const WORKERS: ListSpec<Worker> = {
  id: 'workers',
  noun: 'workers',
  source: (d) => keyedRows(d.workers, (w) => w.endpoint),
  key: (w) => w.endpoint,
  search: (w) => `${w.endpoint} ${workerHealth(w).text} ${w.error ?? ''}`.toLowerCase(),
  sorts: [
    { label: 'health', compare: (a, b) => HEALTH_ORDER(a) - HEALTH_ORDER(b) || byText(a.endpoint, b.endpoint) },
    { label: 'endpoint', compare: (a, b) => byText(a.endpoint, b.endpoint) },
    { label: 'stores', compare: (a, b) => b.stores - a.stores || byText(a.endpoint, b.endpoint) },
  ],
  columns: [
    { title: 'ENDPOINT', width: 28, cell: (w) => ({ text: w.endpoint }) },
    { title: 'HEALTH', width: 7, cell: (w) => workerHealth(w) },
    { title: 'STORES', width: 6, align: 'right', cell: (w) => ({ text: formatCount(w.stores) }) },
    {
      title: 'SCANNED',
      width: 11,
      align: 'right',
      drop: 1,
      cell: (w, x) => ({ text: formatAgo(w.last_scan_at, x.now) }),
    },
    { title: 'ERROR', width: 12, flex: true, cell: (w) => ({ text: w.error ?? '', tone: 'bad' }) },
  ],
  actions: {},
  empty: 'no worker endpoints configured on this master',
};
