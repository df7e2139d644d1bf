import * as fs from 'node:fs';
import * as path from 'node:path';

/** The project root: the nearest folder above this file holding ARGUS's package.json (works from src and dist). */
export function projectRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const pj = path.join(dir, 'package.json');
    if (fs.existsSync(pj)) {
      try {
        if ((JSON.parse(fs.readFileSync(pj, 'utf8')) as { name?: string }).name === 'argus-catalog') return dir;
      } catch {
        /* keep looking */
      }
    }
    dir = path.dirname(dir);
  }
  return process.cwd();
}

/** Where ARGUS keeps its state: the demo catalog copy, sweep ledgers, audit logs, reports. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.ARGUS_STATE_DIR ? path.resolve(env.ARGUS_STATE_DIR) : path.join(projectRoot(), '.argus');
}

export function bundledDemoCatalog(): string {
  return path.join(projectRoot(), 'catalog', 'demo', 'shop-warehouse.json');
}
