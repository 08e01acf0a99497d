#!/usr/bin/env node
// Compiles contracts/src/*.sol with the pinned solc-js (no network) through Standard JSON and writes
//   <out>/<Name>.abi     ABI, pretty JSON (2-space indent) + "\n"
//   <out>/<Name>.bin     creation bytecode, lowercase hex without 0x + "\n" (abigen --bin format)
//   <out>/inputs.sha256  "<sha256 hex>  <name>" per input that determines the output, sorted by name:
//                        every source file compiled (paths relative to contracts/), the compiler
//                        version, and the compiler settings JSON.
// Usage: node build.js [--out DIR]   (default DIR: build/ next to this file)
// Exits nonzero and prints the compiler errors on any error.
'use strict';

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const solc = require('solc');

const ROOT = __dirname;
const SRC = path.join(ROOT, 'src');
const NODE_MODULES = path.join(ROOT, 'node_modules');

// Contracts that must come out of the build (others with bytecode in src/ are written too).
const REQUIRED = ['RevenueVault', 'ClaimsContract', 'TestUSDT', 'TestUSDC', 'BatchSettlement', 'ERC3009DepositCollector'];

// Everything here determines the bytecode; it is hashed into inputs.sha256.
const SETTINGS = {
  evmVersion: 'cancun',
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
};

function sha256(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

function fail(msg) {
  process.stderr.write(msg.endsWith('\n') ? msg : msg + '\n');
  process.exit(1);
}

function parseArgs(argv) {
  let out = path.join(ROOT, 'build');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out') {
      if (i + 1 >= argv.length) fail('build.js: --out needs a directory');
      out = path.resolve(argv[++i]);
    } else if (argv[i].startsWith('--out=')) {
      out = path.resolve(argv[i].slice('--out='.length));
    } else {
      fail(`build.js: unknown argument ${argv[i]}\nusage: node build.js [--out DIR]`);
    }
  }
  return out;
}

// Source unit name -> file path relative to contracts/ (also the name used in inputs.sha256).
function unitToRelPath(unit) {
  if (unit.startsWith('src/')) return unit;
  if (unit.startsWith('@openzeppelin/')) return 'node_modules/' + unit;
  return null;
}

function main() {
  const outDir = parseArgs(process.argv.slice(2));

  const srcFiles = fs.readdirSync(SRC).filter((f) => f.endsWith('.sol')).sort();
  if (srcFiles.length === 0) fail('build.js: no .sol files in src/');
  const sources = {};
  for (const f of srcFiles) {
    sources['src/' + f] = { content: fs.readFileSync(path.join(SRC, f), 'utf8') };
  }

  const loaded = new Map(); // unit name -> exact bytes read
  for (const unit of Object.keys(sources)) loaded.set(unit, fs.readFileSync(path.join(ROOT, unit)));

  function findImports(unit) {
    const rel = unitToRelPath(unit);
    if (rel === null) return { error: `import not allowed (only src/ and @openzeppelin/): ${unit}` };
    const abs = path.join(ROOT, rel);
    if (!abs.startsWith(ROOT + path.sep)) return { error: `import escapes contracts/: ${unit}` };
    let data;
    try {
      data = fs.readFileSync(abs);
    } catch (e) {
      const hint = rel.startsWith('node_modules/') ? ' (run `npm ci` in contracts/)' : '';
      return { error: `cannot read ${rel}${hint}: ${e.code || e.message}` };
    }
    loaded.set(unit, data);
    return { contents: data.toString('utf8') };
  }

  const input = { language: 'Solidity', sources, settings: SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));

  const diags = output.errors || [];
  const errors = diags.filter((d) => d.severity === 'error');
  for (const d of diags) process.stderr.write((d.formattedMessage || d.message) + '\n');
  if (errors.length > 0) fail(`build.js: compilation failed with ${errors.length} error(s)`);

  // Artifacts.
  const artifacts = new Map(); // file name -> content
  for (const unit of Object.keys(output.contracts || {}).sort()) {
    if (!unit.startsWith('src/')) continue;
    for (const name of Object.keys(output.contracts[unit]).sort()) {
      const c = output.contracts[unit][name];
      const bin = c.evm && c.evm.bytecode && c.evm.bytecode.object;
      if (!bin) continue; // abstract contracts, interfaces, libraries without code
      if (/__\$/.test(bin)) fail(`build.js: ${name} needs library linking, which is not supported`);
      if (artifacts.has(name + '.abi')) fail(`build.js: contract name ${name} defined twice`);
      artifacts.set(name + '.abi', JSON.stringify(c.abi, null, 2) + '\n');
      artifacts.set(name + '.bin', bin.toLowerCase() + '\n');
    }
  }
  for (const name of REQUIRED) {
    if (!artifacts.has(name + '.abi')) fail(`build.js: contract ${name} missing from the output`);
  }

  // Input manifest: every source unit the compiler used.
  const lines = [];
  for (const unit of Object.keys(output.sources || {})) {
    const rel = unitToRelPath(unit);
    if (rel === null || !loaded.has(unit)) fail(`build.js: unexpected source unit ${unit}`);
    lines.push([sha256(loaded.get(unit)), rel]);
  }
  const version = solc.version();
  lines.push([sha256(version), 'compiler:solc-' + version]);
  lines.push([sha256(JSON.stringify(SETTINGS)), 'settings:' + JSON.stringify(SETTINGS)]);
  lines.sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  artifacts.set('inputs.sha256', lines.map(([h, n]) => `${h}  ${n}\n`).join(''));

  // Write: drop stale artifacts first so removed contracts do not linger.
  fs.mkdirSync(outDir, { recursive: true });
  for (const f of fs.readdirSync(outDir)) {
    if ((f.endsWith('.abi') || f.endsWith('.bin')) && !artifacts.has(f)) fs.unlinkSync(path.join(outDir, f));
  }
  for (const [f, content] of artifacts) fs.writeFileSync(path.join(outDir, f), content);
  process.stdout.write(`build.js: solc ${version}, ${artifacts.size} files written to ${outDir}\n`);
}

main();
