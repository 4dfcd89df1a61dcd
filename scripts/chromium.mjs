// Where the headless browser of the lock board's test is: CHROMIUM_PATH, or the first of the
// usual names on the PATH.
import { spawnSync } from 'node:child_process';

export function chromiumPath() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    const probe = spawnSync(name, ['--version'], { encoding: 'utf8' });
    if (probe.error === undefined && probe.status === 0) {
      const which = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
      return which.stdout.trim() || name;
    }
  }
  return undefined;
}
