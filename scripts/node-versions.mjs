// Other Node majors than the machine's own, for the test step that reruns suites on them
// (scripts/other-nodes.mjs) and for `npm run bench -- --node 20,22,24`. The binaries come from
// the npm registry's `node` package (a real Node build per platform), installed once into a
// cache and reused: nothing is downloaded from anywhere else.
//   NODE_VERSIONS_CACHE overrides the cache folder (default ~/.cache/nestjs-redis-lock/node).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The machine's own Node major. */
export const OWN_MAJOR = Number(process.versions.node.split('.')[0]);

const cache = process.env.NODE_VERSIONS_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'nestjs-redis-lock', 'node');

/**
 * Node majors from a list such as "22,24" (`what` names the option in the error); empty parts
 * are dropped. Throws on anything but whole majors from 20 up.
 */
export function parseMajors(list, what) {
  const majors = list
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map(Number);
  for (const major of majors) {
    if (!Number.isInteger(major) || major < 20) throw new Error(`${what}: expected Node majors such as 22,24, got ${JSON.stringify(list)}.`);
  }
  return majors;
}

/**
 * The path and version of a Node `major` binary: this process's own for the machine's major,
 * otherwise the npm registry's `node@<major>` installed into the cache on first use. Throws
 * when it cannot be installed or is not the version asked for.
 */
export function nodeBinary(major) {
  if (major === OWN_MAJOR) return { binary: process.execPath, version: process.version };
  const prefix = join(cache, String(major));
  const binary = join(prefix, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(binary)) {
    console.log(`Installing Node ${major} from the npm registry's "node" package into ${prefix} (once; later runs reuse it).`);
    const install = spawnSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', `node@${major}`], { stdio: 'inherit' });
    if (install.status !== 0 || !existsSync(binary)) {
      throw new Error(`Could not install node@${major} from the npm registry (npm exited ${install.status}).`);
    }
  }
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (!version.startsWith(`v${major}.`)) throw new Error(`${binary} is ${version || 'not runnable'}, expected Node ${major}. Delete ${prefix} to reinstall it.`);
  return { binary, version };
}
