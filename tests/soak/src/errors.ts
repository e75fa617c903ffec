/**
 * Errors seen during a run, counted per source, with the first few messages of each kept, each
 * with its wall-clock time (UTC), so that one can be laid beside the machine's other work.
 */
export class ErrorLog {
  readonly #counts = new Map<string, number>();
  readonly #examples = new Map<string, string[]>();
  readonly #now: () => Date;

  constructor(now: () => Date = () => new Date()) {
    this.#now = now;
  }

  record(source: string, message: string): void {
    this.#counts.set(source, (this.#counts.get(source) ?? 0) + 1);
    const kept = this.#examples.get(source) ?? [];
    if (kept.length < 3) kept.push(`${this.#now().toISOString().slice(11, 19)} ${message.slice(0, 300)}`);
    this.#examples.set(source, kept);
  }

  get total(): number {
    let n = 0;
    for (const c of this.#counts.values()) n += c;
    return n;
  }

  /** One line per source: count and examples. */
  lines(): string[] {
    return [...this.#counts].map(
      ([source, n]) => `${source}: ${n} (${(this.#examples.get(source) ?? []).join(' | ')})`,
    );
  }
}
