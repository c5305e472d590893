#!/usr/bin/env node
// Encodes a list of strings with the Hugging Face `tokenizers` library (the @anush008/tokenizers Node
// bindings; tests/reference/install.sh installs them), for references that need token ids without the engine:
//   node encode_strings.mjs TOKENIZER.json NODE_MODULES_DIR IN.json OUT.json
// IN.json is a JSON list of strings; OUT.json gets the list of their ids, encode(text, addSpecialTokens=false).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [tokenizerPath, nodeModules, inPath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error('usage: node encode_strings.mjs TOKENIZER.json NODE_MODULES_DIR IN.json OUT.json');
  process.exit(2);
}
const req = createRequire(path.join(path.resolve(nodeModules), '..', 'package.json'));
const { Tokenizer } = req('@anush008/tokenizers');
const tok = Tokenizer.fromFile(path.resolve(tokenizerPath));
const texts = JSON.parse(fs.readFileSync(inPath, 'utf8'));
const ids = [];
for (const t of texts) ids.push(Array.from((await tok.encode(t, null, { addSpecialTokens: false })).getIds()));
fs.writeFileSync(outPath, JSON.stringify(ids));
