import { formatCount } from './format.js';
import type { ListUi, UiState } from './state/ui-state.js';
import { isList } from './state/ui.js';
import type { ListSpec } from './views/list-spec.js';

/** The key hints of the status line for the current view. */
export function hintsFor(ui: UiState): string {
  if (ui.overlay === 'confirm') return `${ui.confirm?.choice ? 'j/k kind · ' : ''}y/Enter confirm · n/Esc cancel`;
  if (ui.overlay === 'reason') return 'type the reason · Enter next · Esc cancel';
  if (ui.overlay === 'help') return 'Esc close';
  const actions = ui.readonly
    ? 'read-only'
    : ui.view === 'stores'
      ? 'r run… · c reset · p park · u release'
      : ui.view === 'cooldowns' || ui.view === 'tasks'
        ? 'r run · c reset · p park · u release'
        : '';
  if (ui.overlay === 'detail') return ['Esc back', actions, '? help', 'q quit'].filter(Boolean).join(' · ');
  if (!isList(ui.view)) return '1-5/Tab views · ? help · q quit';
  // With a search in Cooldowns, its bulk actions come first: they are what the search is for.
  const bulk =
    ui.view === 'cooldowns' && !ui.readonly && ui.lists.cooldowns.filter.trim() ? 'P/C park/reset all matches' : '';
  const search = ui.view === 'cooldowns' || ui.view === 'tasks' ? '/ search' : '/ filter';
  return [bulk, 'j/k move', search, 's sort', 'Enter detail', 'Space mark', actions, '? help', 'q quit']
    .filter(Boolean)
    .join(' · ');
}

/**
 * Where the status line says the list stands: marks, the filter (while not being edited), the
 * sort and the position (`12/9,998 of 10,000` when a filter hides some).
 */
export function listPosition(
  list: ListUi,
  spec: ListSpec<unknown>,
  index: { readonly length: number; readonly total: number },
  selected: number,
  editingFilter: boolean,
): string {
  const { length, total } = index;
  return [
    list.marked.size > 0 ? `${list.marked.size} marked` : '',
    list.filter && !editingFilter ? `/${list.filter}` : '',
    `sort: ${spec.sorts[list.sort % spec.sorts.length]?.label ?? ''}`,
    `${length === 0 ? 0 : selected + 1}/${formatCount(length)}${length !== total ? ` of ${formatCount(total)}` : ''}`,
  ]
    .filter(Boolean)
    .join('  ');
}
