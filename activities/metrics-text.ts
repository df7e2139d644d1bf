/**
 * Counters and gauges kept in memory and rendered in the Prometheus text exposition format (0.0.4): a `# HELP`
 * and a `# TYPE` line per family, then one sample line per label set, label values escaped. Plain Node, no I/O:
 * worker/metrics-server.ts serves what `render()` returns.
 */

export type MetricType = 'counter' | 'gauge';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Label sets one family keeps; past it new ones are dropped and said so in the output (a runaway label). */
export const MAX_SERIES_PER_FAMILY = 1000;

/** A label value as the format wants it: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text as the format wants it: backslash and line feed escaped (quotes stay). */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value: integers as they are, the special values as the format spells them. */
export function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

/** `{a="x",b="y"}` in the family's label order, or nothing for a family without labels. */
export function renderLabels(names: readonly string[], values: readonly string[]): string {
  if (names.length === 0) return '';
  return `{${names.map((n, i) => `${n}="${escapeLabelValue(values[i] ?? '')}"`).join(',')}}`;
}

interface Series {
  values: string[];
  value: number;
}

/** One metric family: a name, its type and help, a fixed list of label names, a value per label set. */
abstract class Family<L extends string> {
  private readonly series = new Map<string, Series>();
  private dropped = 0;

  constructor(
    readonly name: string,
    readonly type: MetricType,
    readonly help: string,
    readonly labelNames: readonly L[],
  ) {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
    for (const l of labelNames) {
      if (!LABEL_NAME.test(l) || l.startsWith('__')) throw new Error(`invalid label name ${JSON.stringify(l)}`);
    }
  }

  /** The series of a label set (created at 0), or undefined when the family is full. */
  protected at(labels: Record<L, string>): Series | undefined {
    const values = this.labelNames.map((n) => {
      const v = labels[n];
      if (typeof v !== 'string') throw new Error(`${this.name}: label ${n} is missing`);
      return v;
    });
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      if (this.series.size >= MAX_SERIES_PER_FAMILY) {
        this.dropped++;
        return undefined;
      }
      s = { values, value: 0 };
      this.series.set(key, s);
    }
    return s;
  }

  /** The current value of a label set (0 when never touched). */
  get(labels: Record<L, string>): number {
    return this.series.get(this.labelNames.map((n) => labels[n]).join('\u0000'))?.value ?? 0;
  }

  /** HELP, TYPE, then the samples in a stable order (sorted by label values). */
  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`];
    const rows = [...this.series.values()].sort((a, b) => compare(a.values, b.values));
    for (const s of rows) lines.push(`${this.name}${renderLabels(this.labelNames, s.values)} ${formatValue(s.value)}`);
    if (this.dropped > 0)
      lines.push(`# ${this.name}: ${this.dropped} updates of new label sets dropped (over ${MAX_SERIES_PER_FAMILY})`);
    return lines.join('\n') + '\n';
  }
}

function compare(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? '';
    const y = b[i] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Only goes up, for the life of the process. */
export class Counter<L extends string> extends Family<L> {
  constructor(name: string, help: string, labelNames: readonly L[]) {
    super(name, 'counter', help, labelNames);
  }

  /** Add `by` (a finite number >= 0; 0 makes the series visible). */
  inc(labels: Record<L, string>, by = 1): void {
    if (!Number.isFinite(by) || by < 0) throw new RangeError(`${this.name}: a counter only goes up (got ${by})`);
    const s = this.at(labels);
    if (s) s.value += by;
  }
}

/** A value that is set, up or down: the last one given. */
export class Gauge<L extends string> extends Family<L> {
  constructor(name: string, help: string, labelNames: readonly L[]) {
    super(name, 'gauge', help, labelNames);
  }

  set(labels: Record<L, string>, value: number): void {
    const s = this.at(labels);
    if (s) s.value = value;
  }
}

/** The families of one process, rendered together in the order they were made. */
export class MetricRegistry {
  private readonly families: Family<string>[] = [];

  counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return this.add(new Counter(name, help, labelNames));
  }

  gauge<L extends string>(name: string, help: string, labelNames: readonly L[]): Gauge<L> {
    return this.add(new Gauge(name, help, labelNames));
  }

  private add<F extends Family<string>>(f: F): F {
    if (this.families.some((x) => x.name === f.name)) throw new Error(`metric ${f.name} is defined twice`);
    this.families.push(f);
    return f;
  }

  /** Every family, HELP and TYPE included even before a first sample. */
  render(): string {
    return this.families.map((f) => f.render()).join('');
  }
}
