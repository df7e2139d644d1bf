// Jest globalSetup of `npm run test:cluster`: the dev server every workflow test uses (test/global-setup.js, for
// the control runs), and a cluster of its own brought up with `npm run cluster -- up` in a fresh folder
// (ARGUS_CLUSTER_DIR, which the tests read). ARGUS_CLUSTER_TEST_DIR names a folder to use instead (kept: a second
// run then measures an `up` on existing data). Progress goes to stderr with ARGUS_TEST_VERBOSE.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const devServerSetup = require('../global-setup');
const devServerTeardown = require('../global-teardown');

const ROOT = path.resolve(__dirname, '../..');

/** `npm run cluster -- <args>` on the test's folder; throws with its output when it fails. */
function cluster(args, dir) {
  const started = Date.now();
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'run-ts.js'), 'scripts/cluster.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ARGUS_CLUSTER_DIR: dir },
    encoding: 'utf8',
    timeout: 20 * 60_000,
  });
  const output = `${r.stdout}${r.stderr}`;
  if (r.status !== 0)
    throw new Error(`npm run cluster -- ${args.join(' ')} failed (${r.status ?? r.signal}):\n${output}`);
  return { output, seconds: (Date.now() - started) / 1000 };
}

module.exports = async function globalSetup() {
  await devServerSetup();
  const keep = !!process.env.ARGUS_CLUSTER_TEST_DIR;
  const dir = keep
    ? path.resolve(process.env.ARGUS_CLUSTER_TEST_DIR)
    : fs.mkdtempSync(path.join(os.tmpdir(), 'argus-cluster-test-'));
  // As root, PostgreSQL runs as nobody, which must pass through this folder (mkdtemp makes it 0700).
  fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(dir, 0o755);
  process.env.ARGUS_CLUSTER_DIR = dir;
  // The cluster tests skip themselves without it: `npm test` finds them too, and has no cluster.
  process.env.ARGUS_CLUSTER_TEST_RUN = '1';
  globalThis.__ARGUS_TEST_CLUSTER__ = { dir, keep };
  try {
    const { output, seconds } = cluster(['up', '--workers', '2'], dir);
    process.stderr.write(`\nargus: test cluster up in ${seconds.toFixed(1)} s (${dir})\n`);
    if (process.env.ARGUS_TEST_VERBOSE) process.stderr.write(output);
  } catch (err) {
    // Jest runs no globalTeardown after a failed globalSetup: stop what started here.
    try {
      cluster(['down'], dir);
    } finally {
      await devServerTeardown();
    }
    throw err;
  }
};

module.exports.cluster = cluster;
