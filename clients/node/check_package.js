#!/usr/bin/env node
// Checks the installed gpu-advisor-client package against a live gateway:
//   node check_package.js GATEWAY_ADDRESS
// (run from a directory where `npm install <packed tarball>` put it in
// node_modules). Prints "node package: N passed, M failed"; exits 1 on any
// failure.
'use strict';
const {GatewayClient, GatewayError} = require('gpu-advisor-client');

async function main() {
  const target = process.argv[2] || '127.0.0.1:50050';
  let passed = 0;
  let failed = 0;
  const check = (name, ok, detail = '') => {
    if (ok) { passed++; console.log(`PASS  ${name}`); } else { failed++; console.log(`FAIL  ${name} ${detail}`); }
  };
  const advisor = new GatewayClient(target, {timeoutMs: 20000});
  try {
    await advisor.waitReady(30000);
    const answer = await advisor.recommend({
      workload: {task: 'TASK_QLORA', model: {preset: 'llama-3.1-8b'}, precision: 'PRECISION_NF4',
                 train_tokens: 5e7, sequence_length: 2048},
      constraints: {max_total_usd: 500}, max_results: 5});
    const recs = answer.recommendations;
    const totals = recs.map((r) => r.cost.total_usd);
    check('recommend: ranked, cheapest first, within budget',
          recs.length > 0 && recs.every((r, i) => r.rank === i + 1) &&
          totals.every((a, i) => totals.slice(i + 1).every((b) => a <= b * (1 + (answer.tie_band_fraction || 0)) * (1 + 1e-12))) &&
          Math.max(...totals) <= 500, `${totals.join(' ')} (tie band ${answer.tie_band_fraction})`);
    check('int64 fields are decimal strings', typeof recs[0].memory.total_bytes === 'string');
    try {
      await advisor.recommend({workload: {task: 'TASK_LORA', model: {params: -1}, train_tokens: 5e7, sequence_length: 2048}});
      check('bad workload rejects', false, 'no error');
    } catch (e) {
      check('bad workload rejects with GatewayError naming the field',
            e instanceof GatewayError && e.status === 'INVALID_ARGUMENT' && e.field === 'workload.model.params', String(e));
    }
    // Keys that are not fields are errors, never dropped: a misspelt budget
    // would otherwise be a request without one.
    for (const [label, request, field] of [
      ['a camelCase key', {workload: {task: 'TASK_LORA', model: {preset: 'llama-3.1-8b'}, trainTokens: 5e7}},
       'workload.trainTokens'],
      ['a misspelt budget', {workload: {task: 'TASK_LORA', model: {preset: 'llama-3.1-8b'}, train_tokens: 5e7,
                                        sequence_length: 2048}, constraints: {max_total: 1}}, 'constraints.max_total'],
      ['a key inside a list', {workload: {task: 'TASK_LORA', model: {preset: 'llama-3.1-8b'}, train_tokens: 5e7},
                               configurations: [{gpu_model: 'H100-SXM', gpus: 8}]}, 'configurations[0].gpus'],
    ]) {
      const method = field.startsWith('configurations') ? 'estimate' : 'recommend';
      try {
        await advisor[method](request);
        check(`${label} is rejected`, false, 'no error');
      } catch (e) {
        check(`${label} is rejected: INVALID_ARGUMENT naming ${field}`,
              e instanceof GatewayError && e.status === 'INVALID_ARGUMENT' && e.field === field, String(e));
      }
    }
    const sized = await advisor.estimate({
      workload: {task: 'TASK_FULL_FINETUNE', model: {preset: 'llama-3.1-8b'}, train_tokens: 1e9, sequence_length: 4096},
      configurations: [{gpu_model: 'H100-SXM', gpus_per_node: 8, nodes: 1}]});
    check('estimate sizes one configuration', sized.estimates.length === 1 && Number(sized.estimates[0].memory.total_bytes) > 0);
    const offers = await advisor.offers({gpu_models: ['H100'], page_size: 5});
    check('offers filter by GPU', offers.offers.length > 0 && offers.offers.every((o) => o.gpu_model.startsWith('H100')));
    check('gpus list specs', (await advisor.gpus()).gpus.some((g) => g.name === 'H100-SXM'));
    check('models list presets', (await advisor.models()).models.some((m) => m.preset === 'llama-3.1-70b'));
  } catch (e) {
    check('calls complete', false, String(e));
  } finally {
    advisor.close();
  }
  console.log(`node package: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
main();
