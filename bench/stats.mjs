// Small statistics helpers for the benchmark.

export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export const median = (values) => percentile(values, 50);

/** Rounds for display: 3 significant digits. */
export function fmt(value) {
  if (value === undefined || value === null || Number.isNaN(value)) return '-';
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return String(Math.round(value));
  return Number(value.toPrecision(3)).toString();
}
