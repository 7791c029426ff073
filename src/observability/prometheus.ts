import type { Figure, FigureSink } from './figures.js';
import { DURATION_BUCKETS } from './series.js';

/*
 * The figures in memory, written in the Prometheus text exposition format 0.0.4: `# HELP` and
 * `# TYPE` per figure, one sample line per series (a histogram's `_bucket{le=…}` lines,
 * cumulative, then `_sum` and `_count`). No dependency: the format is a few lines of text.
 */

/** The text format's media type (`Content-Type` of the answer). */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

interface Series {
  /** `{a="x",b="y"}`, or `''` for no labels. */
  readonly labels: string;
  /** A counter's value, a histogram's sum. */
  value: number;
  /** A histogram's observations per bucket (not cumulative), the last one `+Inf`'s. */
  readonly buckets?: number[];
  count: number;
}

interface Family {
  readonly figure: Figure;
  /** By the label set's identity: the recorder hands out each label set once made. */
  readonly byObject: WeakMap<object, Series>;
  /** By the rendered labels: the same series for an equal label set made elsewhere. */
  readonly byText: Map<string, Series>;
}

/** A {@link FigureSink} that keeps the figures in memory and writes them in the text format. */
export interface PrometheusSink extends FigureSink {
  /** Every figure seen or `declared`, in the text exposition format 0.0.4. */
  text(): string;
  /** How many series there are (for a histogram, one per label set): what must stay bounded. */
  seriesCount(): number;
}

/**
 * A sink in memory. The figures in `declared` are written even before their first count (their
 * `# HELP` and `# TYPE`), so a scraper knows them from the start.
 */
export function prometheusSink(declared: readonly Figure[] = []): PrometheusSink {
  const families = new Map<string, Family>();
  const familyOf = (figure: Figure): Family => {
    let family = families.get(figure.prometheus);
    if (family === undefined) {
      family = { figure, byObject: new WeakMap(), byText: new Map() };
      families.set(figure.prometheus, family);
    }
    return family;
  };
  for (const figure of declared) familyOf(figure);
  const seriesOf = (figure: Figure, labels: Readonly<Record<string, string>>): Series => {
    const family = familyOf(figure);
    let series = family.byObject.get(labels);
    if (series !== undefined) return series;
    const text = renderLabels(figure, labels);
    series = family.byText.get(text);
    if (series === undefined) {
      const buckets =
        figure.kind === 'histogram' ? new Array<number>(DURATION_BUCKETS.length + 1).fill(0) : undefined;
      series = { labels: text, value: 0, count: 0, ...(buckets === undefined ? {} : { buckets }) };
      family.byText.set(text, series);
    }
    family.byObject.set(labels, series);
    return series;
  };
  return {
    count(figure, labels, by = 1) {
      seriesOf(figure, labels).value += by;
    },
    observe(figure, labels, seconds) {
      const series = seriesOf(figure, labels);
      let i = 0;
      while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
      series.buckets![i]!++;
      series.value += seconds;
      series.count++;
    },
    text() {
      return [...families.values()].map(renderFamily).join('');
    },
    seriesCount() {
      let count = 0;
      for (const family of families.values()) count += family.byText.size;
      return count;
    },
  };
}

function renderFamily({ figure, byText }: Family): string {
  const name = figure.prometheus;
  let out = `# HELP ${name} ${escapeHelp(figure.help)}\n# TYPE ${name} ${figure.kind}\n`;
  for (const series of byText.values()) {
    if (figure.kind === 'counter') {
      out += `${name}${series.labels} ${number(series.value)}\n`;
      continue;
    }
    const open = series.labels === '' ? '{' : `${series.labels.slice(0, -1)},`;
    let cumulative = 0;
    series.buckets!.forEach((inBucket, i) => {
      cumulative += inBucket;
      const le = i < DURATION_BUCKETS.length ? String(DURATION_BUCKETS[i]) : '+Inf';
      out += `${name}_bucket${open}le="${le}"} ${cumulative}\n`;
    });
    out += `${name}_sum${series.labels} ${number(series.value)}\n`;
    out += `${name}_count${series.labels} ${series.count}\n`;
  }
  return out;
}

/** `{a="x",b="y"}` in the figure's label order; labels without a value are left out. */
function renderLabels(figure: Figure, labels: Readonly<Record<string, string>>): string {
  const pairs = figure.labels
    .filter((label) => labels[label] !== undefined)
    .map((label) => `${label}="${escapeLabelValue(labels[label]!)}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** A label value: backslash, double quote and line feed escaped (the format's rule). */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** `# HELP` text: backslash and line feed escaped. */
function escapeHelp(help: string): string {
  return help.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/** A sample value as the format writes it (`+Inf`, `-Inf`, `NaN` included). */
function number(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
