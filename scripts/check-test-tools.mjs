// npm test, first step: the suite runs against real servers and a real browser that it starts
// itself. Without them it stops here, at once, with one line saying what to install, instead
// of a cascade of ENOENT failures.
import { spawnSync } from 'node:child_process';
import { chromiumPath } from './chromium.mjs';

const tools = ['redis-server', 'redis-cli', 'redis-sentinel'].filter((tool) => {
  const probe = spawnSync(tool, ['--version'], { encoding: 'utf8' });
  return probe.error !== undefined || probe.status !== 0;
});
if (chromiumPath() === undefined) tools.push('chromium');

if (tools.length > 0) {
  console.error(
    `npm test needs ${tools.join(', ')} on the PATH and did not find ${tools.length === 1 ? 'it' : 'them'}. ` +
      'Install: Debian/Ubuntu `apt-get install redis-server redis-sentinel chromium`; macOS `brew install redis && brew install --cask chromium` ' +
      '(or set CHROMIUM_PATH to a Chromium or Chrome binary).',
  );
  process.exit(1);
}
