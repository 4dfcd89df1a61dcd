/** Prints one summary line for a chaos scenario, with its figures. */
export function report(scenario: string, figures: Record<string, string | number | boolean>): void {
  const text = Object.entries(figures)
    .map(([name, value]) => `${name}=${typeof value === 'number' && !Number.isInteger(value) ? value.toFixed(1) : value}`)
    .join(' ');
  process.stdout.write(`chaos ${scenario}: ${text}\n`);
}
