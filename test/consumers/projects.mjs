// The consumer applications' scratch projects: the packed package installed beside Nest 11 (and
// terminus 11, ioredis 6) from the npm registry, as a real application resolves it. Each consumer
// spec installs its own; `npm test` (scripts/test.mjs) installs both once, while it type-checks,
// and every Node version's run reuses them through NESTJS_REDIS_LOCK_CONSUMERS: the installs
// were six of the suite's slowest minutes, the same packages fetched for each run.
//   node test/consumers/projects.mjs <dir>   packs the package and installs every project in <dir>
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));
const INSTALLED = '.installed';
const INSTALL_ARGS = ['install', '--no-audit', '--no-fund', '--loglevel=error'];

/** Each consumer: its dependencies beside the packed package, and the application it runs (`app.cjs`). */
export const CONSUMERS = {
  nest11: {
    app: 'nest11-app.cjs',
    dependencies: {
      '@nestjs/common': '^11.0.0',
      '@nestjs/core': '^11.0.0',
      // The optional peers of the subpath exports, which the app requires too.
      '@nestjs/terminus': '^11.0.0',
      '@opentelemetry/api': '^1.9.0',
      ioredis: '^6.0.0',
      'reflect-metadata': '^0.2.0',
      rxjs: '^7.8.0',
    },
  },
  terminus11: {
    app: 'terminus11-app.cjs',
    dependencies: {
      '@nestjs/common': '^11.0.0',
      '@nestjs/core': '^11.0.0',
      '@nestjs/terminus': '^11.0.0',
      ioredis: '^5.0.0',
      'reflect-metadata': '^0.2.0',
      rxjs: '^7.8.0',
    },
  },
};

/** `npm pack` of the package (its build, dist/) into `dir`; the tarball's path. */
export function packInto(dir) {
  mkdirSync(dir, { recursive: true });
  execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: root, stdio: 'pipe' });
  const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack wrote no tarball into ${dir}`);
  return join(dir, tarball);
}

/** Writes consumer `name`'s package.json (the package from `tarball`) and its app.cjs into `dir`. */
function lay(name, dir, tarball) {
  const { app, dependencies } = CONSUMERS[name];
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `${name}-consumer`, private: true, dependencies: { ...dependencies, 'nestjs-redis-lock': `file:${tarball}` } }));
  copyFileSync(join(here, app), join(dir, 'app.cjs'));
}

/** Installs consumer `name` into the empty `dir` (a spec's own); npm's status and stderr. */
export function installConsumer(name, dir) {
  lay(name, dir, packInto(dir));
  const install = spawnSync('npm', INSTALL_ARGS, { cwd: dir, encoding: 'utf8' });
  return { status: install.status, stderr: install.stderr };
}

/** The project `npm test` installed for consumer `name`, if it did and the install succeeded. */
export function preparedConsumer(name) {
  const base = process.env.NESTJS_REDIS_LOCK_CONSUMERS;
  if (!base) return undefined;
  const dir = join(base, name);
  return existsSync(join(dir, INSTALLED)) ? dir : undefined;
}

/**
 * Installs every consumer under `base` at once (one pack, the installs side by side); resolves
 * with what failed. A consumer whose install failed is left unmarked: its spec then installs on
 * its own and reports the failure there.
 */
export async function prepareConsumers(base) {
  const tarball = packInto(base);
  const failed = await Promise.all(
    Object.keys(CONSUMERS).map(
      (name) =>
        new Promise((resolve) => {
          const dir = join(base, name);
          lay(name, dir, tarball);
          const child = spawn('npm', INSTALL_ARGS, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
          let stderr = '';
          child.stderr.on('data', (chunk) => (stderr += chunk));
          child.on('error', (error) => resolve(`${name}: ${error.message}`));
          child.on('close', (status) => {
            if (status !== 0) return resolve(`${name}: npm install exited ${status}\n${stderr}`);
            writeFileSync(join(dir, INSTALLED), '');
            resolve(undefined);
          });
        }),
    ),
  );
  return failed.filter((line) => line !== undefined);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const base = process.argv[2];
  if (!base) {
    console.error('usage: node test/consumers/projects.mjs <dir>');
    process.exit(2);
  }
  const failed = await prepareConsumers(base);
  for (const line of failed) console.error(`Consumer project not installed ahead (its spec installs it): ${line}`);
  console.log(`consumer projects: ${Object.keys(CONSUMERS).length - failed.length} of ${Object.keys(CONSUMERS).length} installed in ${base}`);
}
