// Builds the console: src/main.ts bundled (with viem) by the pinned esbuild
// into dist/app.js, src/style.css into dist/app.css, src/index.html copied.
// Deterministic: the same sources and lockfile give the same bytes, which
// console_test.go (TestDistFresh) checks against the committed dist/.
//   node build.mjs [--out DIR]   (default: dist)
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const i = process.argv.indexOf('--out');
const out = i > 0 ? process.argv[i + 1] : join(here, 'dist');
mkdirSync(out, { recursive: true });

const common = { bundle: true, minify: true, legalComments: 'none', charset: 'utf8', logLevel: 'warning', absWorkingDir: here };
await build({ ...common, entryPoints: ['src/main.ts'], outfile: join(out, 'app.js'), format: 'iife', target: 'es2020', platform: 'browser' });
await build({ ...common, entryPoints: ['src/style.css'], outfile: join(out, 'app.css') });
copyFileSync(join(here, 'src', 'index.html'), join(out, 'index.html'));
console.log('console built into ' + out);
