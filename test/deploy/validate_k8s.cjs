// Validates Kubernetes objects against the API schemas shipped by the npm
// package kubernetes-models (types, enums, formats, required fields).
// Usage: node validate_k8s.cjs <tools-npm-dir> <objects.json>
// objects.json: [{"source": "file#index", "object": {...}}, ...]
// Prints one line per object; exits 1 if any object is invalid or of a kind
// the package does not know.
'use strict';
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

const [toolsDir, inputPath] = process.argv.slice(2);
if (!toolsDir || !inputPath) {
  console.error('usage: validate_k8s.cjs <tools-npm-dir> <objects.json>');
  process.exit(2);
}
const requireFromTools = createRequire(path.join(path.resolve(toolsDir), 'package.json'));
const items = JSON.parse(fs.readFileSync(inputPath, 'utf8'));

let failed = 0;
for (const { source, object } of items) {
  const apiVersion = String(object.apiVersion || '');
  const kind = String(object.kind || '');
  const label = `${source} ${kind}/${(object.metadata || {}).name || '?'}`;
  // "apps/v1" -> apps/v1/DaemonSet; "v1" -> v1/Pod (the core group).
  const modulePath = `kubernetes-models/${apiVersion}/${kind}`;
  let Model;
  try {
    const mod = requireFromTools(modulePath);
    Model = mod[kind] || mod.default;
  } catch (e) {
    console.log(`FAIL ${label}: unknown apiVersion/kind ${apiVersion}/${kind}`);
    failed++;
    continue;
  }
  try {
    new Model(object).validate();
    console.log(`ok   ${label}`);
  } catch (e) {
    console.log(`FAIL ${label}: ${e.message}`);
    failed++;
  }
}
console.log(`${items.length - failed} valid, ${failed} invalid`);
process.exit(failed ? 1 : 0);
