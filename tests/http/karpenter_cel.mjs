// Evaluates the CEL validation rules (x-kubernetes-validations) of a
// Karpenter CRD's openAPIV3Schema against objects, as the Kubernetes API
// server does on create: every rule at every path the object has, `self`
// bound to the value there; transition rules (those using oldSelf) do not
// run on create. The Kubernetes regex library's string.find is registered.
//   node karpenter_cel.mjs INPUT.json
// INPUT.json: {"schema": <openAPIV3Schema>, "objects": [...]}. Prints one
// line per failed rule and exits 1 when any fails; prints the number of
// rules evaluated otherwise.
import {readFileSync} from 'node:fs';
import {createRequire} from 'node:module';
import {fileURLToPath} from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../tools/package.json'));
const {Environment} = await import(require.resolve('@marcbachmann/cel-js'));

const env = new Environment({unlistedVariablesAreDyn: true})
  .registerFunction('string.find(string): string', (s, re) => {
    const m = new RegExp(re).exec(s);
    return m ? m[0] : '';
  });

// CEL ints are BigInt in cel-js.
function toCel(v) {
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  }
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return v;
}

const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let evaluated = 0;
const failures = [];
function walk(schema, value, where) {
  if (schema === undefined || value === undefined || value === null) return;
  for (const rule of schema['x-kubernetes-validations'] || []) {
    if (/\boldSelf\b/.test(rule.rule)) continue;
    evaluated++;
    let ok = false;
    try {
      ok = env.evaluate(rule.rule, {self: toCel(value)}) === true;
    } catch (e) {
      failures.push(`${where}: rule ${JSON.stringify(rule.rule)} did not evaluate: ${e.message}`);
      continue;
    }
    if (!ok) failures.push(`${where}: ${rule.message || rule.rule}`);
  }
  if (schema.properties && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, s] of Object.entries(schema.properties)) walk(s, value[k], `${where}.${k}`);
  }
  if (schema.items && Array.isArray(value)) value.forEach((x, i) => walk(schema.items, x, `${where}[${i}]`));
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object' &&
      typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, x] of Object.entries(value)) walk(schema.additionalProperties, x, `${where}.${k}`);
  }
}
input.objects.forEach((o, i) => walk(input.schema, o, `object ${i + 1} (${o?.metadata?.name})`));
for (const f of failures) console.log(`CEL: ${f}`);
if (evaluated === 0) {
  console.log('CEL: no rule evaluated');
  process.exit(1);
}
if (failures.length) process.exit(1);
console.log(`CEL: ${evaluated} rules passed`);
