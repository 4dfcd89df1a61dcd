// npm test, first step: the suite runs against real servers and a real browser that it starts
// itself. Without them it stops here, at once, with one line saying what to install, instead
// of a cascade of ENOENT failures.
import { spawnSync } from 'node:child_process';
import { chromiumPath } from './chromium.mjs';
import { postgresInstalled } from './postgres-server.mjs';

const tools = ['redis-server', 'redis-cli', 'redis-sentinel'].filter((tool) => {
  const probe = spawnSync(tool, ['--version'], { encoding: 'utf8' });
  return probe.error !== undefined || probe.status !== 0;
});
if (chromiumPath() === undefined) tools.push('chromium');
// Debian keeps initdb and postgres in /usr/lib/postgresql/<major>/bin, off the PATH: found there too.
if (!postgresInstalled()) tools.push('PostgreSQL (initdb, postgres)');

if (tools.length > 0) {
  console.error(
    `npm test needs ${tools.join(', ')} on the PATH and did not find ${tools.length === 1 ? 'it' : 'them'}. ` +
      'Install: Debian/Ubuntu `apt-get install redis-server redis-sentinel chromium postgresql`; macOS `brew install redis postgresql && brew install --cask chromium` ' +
      '(or set CHROMIUM_PATH to a Chromium or Chrome binary, PG_BIN to the directory of initdb and postgres).',
  );
  process.exit(1);
}
