/**
 * How the scheduler's log lines read in the pretty format (`LOG_FORMAT=pretty`): a task outcome
 * is one short line (`merge_wal store-07 done in 1.2 s: merged 12 generations across 3/3
 * workers`), and a target entering its cooldown stands out. The JSON lines keep every field.
 */
import type { PrettyColors, PrettyFormat } from '@maintd/settings/logging';

/** Longest worker error a pretty task line shows; the JSON line has it whole. */
const ERROR_MAX = 120;

/** Fields the pretty lines say in words (or leave to the JSON lines). */
const SAID = [
  'task_id',
  'kind',
  'target',
  'attempt',
  'source',
  'duration_ms',
  'workers',
  'state',
  'detail',
  'error',
  'error_class',
  'failures',
  'cooldown_secs',
  'until_ms',
  'last_error',
] as const;

/** The scheduler's lines in the pretty format; pass to `createLogger`'s `pretty`. */
export const PRETTY_LOG_FORMAT: PrettyFormat = {
  ignore: SAID,
  message: prettyMessage,
};

function prettyMessage(log: Readonly<Record<string, unknown>>, colors: PrettyColors): string | undefined {
  const msg = typeof log.msg === 'string' ? log.msg : '';
  const subject = typeof log.kind === 'string' && typeof log.target === 'string' ? `${log.kind} ${log.target}` : '';
  const took = typeof log.duration_ms === 'number' ? ` in ${seconds(log.duration_ms / 1000)}` : '';
  const by = log.source === 'manual' ? ' (manual)' : '';
  if (msg === 'task done') return `${subject} ${colors.green('done')}${took}${by}: ${str(log.detail)}`;
  if (msg === 'task failed') {
    const attempt = typeof log.attempt === 'number' && log.attempt > 1 ? `, attempt ${log.attempt}` : '';
    return `${subject} ${colors.red('failed')}${took}${by}${attempt}: ${short(str(log.error))}`;
  }
  if (msg.startsWith('target failed repeatedly')) {
    const window = typeof log.cooldown_secs === 'number' ? seconds(log.cooldown_secs) : 'a while';
    const tag = colors.inverse(colors.magenta(colors.bold(' COOLDOWN ')));
    return `${tag} ${colors.bold(colors.magenta(`${subject}: ${str(log.failures)} failures in a row; sweeps skip it for ${window}`))}: ${short(str(log.last_error))}`;
  }
  if (msg.startsWith('fleet guard')) {
    return `${colors.yellow(`fleet guard: ${subject}`)} failed ${str(log.failures)} times, but too much of the fleet is cooling to open a window: ${short(str(log.last_error))}`;
  }
  // Any other line: its subject first, then whatever else of the hidden fields it carries.
  const rest = SAID.filter((k) => k !== 'kind' && k !== 'target' && log[k] !== undefined)
    .map((k) => `${k}=${typeof log[k] === 'string' ? JSON.stringify(log[k]) : str(log[k])}`)
    .join(' ');
  if (subject === '' && rest === '') return undefined;
  return `${subject === '' ? '' : `${subject}: `}${msg}${rest === '' ? '' : ` ${colors.gray(rest)}`}`;
}

/** `0.4 s`, `12 s`, `10 min`, `1.5 h`. */
function seconds(s: number): string {
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
}

/** One line, at most {@link ERROR_MAX} characters. */
function short(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > ERROR_MAX ? `${line.slice(0, ERROR_MAX - 1)}…` : line;
}
