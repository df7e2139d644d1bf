import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readJson, writeFileAtomic } from '../../state/file/fs';

describe('writeFileAtomic', () => {
  test('makes the folder, and makes it again when it was removed after an earlier write', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'argus-paths-'));
    const file = path.join(root, 'a', 'b', 'x.json');
    await writeFileAtomic(file, '{"n":1}');
    expect(await readJson(file)).toEqual({ n: 1 });
    // The folder is remembered as made; removing it must not lose the next write.
    fs.rmSync(path.join(root, 'a'), { recursive: true });
    await writeFileAtomic(file, '{"n":2}');
    expect(await readJson(file)).toEqual({ n: 2 });
    // No temporary file is left beside it.
    expect(fs.readdirSync(path.dirname(file))).toEqual(['x.json']);
    fs.rmSync(root, { recursive: true });
  });
});
