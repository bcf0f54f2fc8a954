#!/usr/bin/env node
// GPU Advisor Node client: a sample Recommend call that also checks the answer.
//
//   cd clients/node && npm ci && node recommend.js [GATEWAY_ADDRESS]   # default 127.0.0.1:50050
//
// Loads the contracts from ../../proto at run time (@grpc/proto-loader, no
// generated code) and grpc.health.v1 from /usr/share/grpc-proto (Debian's
// grpc-proto; override with GRPC_PROTO_DIR). Waits for the gateway to report
// SERVING, then runs the same two checks as the Python client:
//   1. Recommend for a QLoRA fine-tune of llama-3.1-8b, cheapest first: a
//      non-empty ranked list 1..n, total cost ascending, every GPU >= 16 GB.
//   2. Recommend with model.params = -1: INVALID_ARGUMENT naming
//      "workload.model.params".
// Prints a ranked table and "node client: N passed, M failed"; exits 1 unless
// both pass.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const DEFAULT_ADDRESS = '127.0.0.1:50050';
const RPC_TIMEOUT_MS = 10000;
const READY_TIMEOUT_MS = 30000;
const MIN_GPU_MEMORY_BYTES = 16e9;

function loadProtos() {
  const def = protoLoader.loadSync(
    ['gpuadvisor/gateway/v1/gateway.proto', 'grpc/health/v1/health.proto'],
    {
      keepCase: true, // field names as in the .proto (total_usd, not totalUsd)
      longs: String, // int64 as decimal strings: bytes counts exceed 2^53 in theory
      enums: String,
      defaults: true,
      oneofs: true,
      includeDirs: [
        path.join(__dirname, '..', '..', 'proto'),
        process.env.GRPC_PROTO_DIR || '/usr/share/grpc-proto',
      ],
    });
  return grpc.loadPackageDefinition(def);
}

function deadline(ms) {
  return new Date(Date.now() + ms);
}

// Promisified unary call that resolves to {err, reply}.
function call(client, method, request, timeoutMs) {
  return new Promise((resolve) => {
    client[method](request, { deadline: deadline(timeoutMs) }, (err, reply) => resolve({ err, reply }));
  });
}

function qloraWorkload(model) {
  return {
    task: 'TASK_QLORA',
    model,
    precision: 'PRECISION_NF4',
    train_tokens: 50e6,
    sequence_length: 2048,
    micro_batch_size: 1,
  };
}

// Polls grpc.health.v1 until SERVING; returns the last status seen.
async function waitServing(health, timeoutMs) {
  const end = Date.now() + timeoutMs;
  let status = 'no answer';
  while (Date.now() < end) {
    const { err, reply } = await call(health, 'Check', { service: '' }, 2000);
    if (err) {
      status = `${grpc.status[err.code]}: ${err.details}`;
    } else {
      status = reply.status;
      if (status === 'SERVING') return status;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return status;
}

function printTable(recs) {
  const pad = (s, n) => String(s).slice(0, n).padEnd(n);
  const num = (x, n, d) => Number(x).toFixed(d).padStart(n);
  const header = ` #  ${pad('provider', 12)} ${pad('instance', 26)} ${pad('region', 14)} ${pad('gpus', 22)} ` +
    `${pad('option', 9)} ${'GB/GPU'.padStart(6)} ${'hours'.padStart(8)} ${'$/hour'.padStart(9)} ${'total $'.padStart(10)}`;
  console.log(header);
  console.log('-'.repeat(header.length));
  for (const r of recs) {
    const o = r.offer;
    const gpus = `${o.gpus_per_node}x ${o.gpu_model}` + (o.nodes > 1 ? ` x${o.nodes} nodes` : '');
    const option = String(r.purchase_option).replace('PURCHASE_OPTION_', '').toLowerCase();
    console.log(`${String(r.rank).padStart(2)}  ${pad(o.provider, 12)} ${pad(o.instance_type, 26)} ` +
      `${pad(o.region, 14)} ${pad(gpus, 22)} ${pad(option, 9)} ${num(Number(r.gpu_memory_bytes) / 1e9, 6, 0)} ` +
      `${num(r.estimated_hours, 8, 2)} ${num(r.cost.usd_per_hour, 9, 2)} ${num(r.cost.total_usd, 10, 2)}`);
  }
}

// Each check returns a list of problems; empty means it passed.
async function checkRecommend(gateway) {
  const { err, reply } = await call(gateway, 'Recommend', {
    workload: qloraWorkload({ preset: 'llama-3.1-8b' }),
    constraints: { objective: 'OBJECTIVE_CHEAPEST' },
    max_results: 5,
  }, RPC_TIMEOUT_MS);
  if (err) return [`Recommend failed: ${grpc.status[err.code]}: ${err.details}`];
  const recs = reply.recommendations;
  console.log(`QLoRA llama-3.1-8b, 50M tokens: ${recs.length} recommendations ` +
    `(${reply.candidates_considered} candidates, catalog ${reply.catalog_version || '?'}, ` +
    `prices used: oldest ${reply.oldest_price_as_of || '?'}, newest ${reply.newest_price_as_of || '?'})`);
  if (recs.length) printTable(recs);
  const problems = [];
  if (recs.length === 0) problems.push('no recommendations');
  if (recs.length > 5) problems.push(`${recs.length} recommendations for max_results=5`);
  const ranks = recs.map((r) => r.rank);
  if (!ranks.every((rank, i) => rank === i + 1)) problems.push(`ranks are [${ranks}], want 1..${recs.length}`);
  // Cheapest first, with totals within the answer's tie band (the estimate's
  // own uncertainty) ranked by time, then risk: a later entry is never cheaper
  // than an earlier one by more than the band.
  const totals = recs.map((r) => r.cost.total_usd);
  const band = reply.tie_band_fraction || 0;
  if (totals.some((a, i) => totals.slice(i + 1).some((b) => a > b * (1 + band) * (1 + 1e-12)))) {
    problems.push(`total_usd out of order beyond the tie band ${band}: [${totals}]`);
  }
  for (const r of recs) {
    if (Number(r.gpu_memory_bytes) < MIN_GPU_MEMORY_BYTES) {
      problems.push(`rank ${r.rank} ${r.offer.gpu_model}: gpu_memory_bytes ${r.gpu_memory_bytes} < ${MIN_GPU_MEMORY_BYTES}`);
    }
    if (!(r.cost.total_usd > 0)) problems.push(`rank ${r.rank}: unpriced (total_usd ${r.cost.total_usd})`);
  }
  return problems;
}

async function checkInvalidWorkload(gateway) {
  const { err } = await call(gateway, 'Recommend', {
    workload: qloraWorkload({ params: -1 }),
    max_results: 5,
  }, RPC_TIMEOUT_MS);
  if (!err) return ['Recommend with model.params = -1 succeeded, want INVALID_ARGUMENT'];
  console.log(`invalid workload: ${grpc.status[err.code]}: ${err.details}`);
  const problems = [];
  if (err.code !== grpc.status.INVALID_ARGUMENT) problems.push(`code ${grpc.status[err.code]}, want INVALID_ARGUMENT`);
  if (!String(err.details).includes('workload.model.params')) {
    problems.push(`message '${err.details}' does not name workload.model.params`);
  }
  return problems;
}

async function main(address) {
  const pkg = loadProtos();
  const creds = grpc.credentials.createInsecure();
  const health = new pkg.grpc.health.v1.Health(address, creds);
  const gateway = new pkg.gpuadvisor.gateway.v1.GatewayService(address, creds);
  const checks = [['recommend', checkRecommend], ['invalid workload', checkInvalidWorkload]];
  let passed = 0;
  let failed = 0;
  try {
    const status = await waitServing(health, READY_TIMEOUT_MS);
    if (status !== 'SERVING') {
      console.log(`FAIL  gateway ${address} health: ${status}, want SERVING`);
      console.log(`node client: 0 passed, ${checks.length} failed`);
      return 1;
    }
    console.log(`gateway ${address}: SERVING`);
    for (const [name, fn] of checks) {
      const problems = await fn(gateway);
      if (problems.length) {
        failed++;
        console.log(`FAIL  ${name}`);
        for (const p of problems) console.log(`      ${p}`);
      } else {
        passed++;
        console.log(`PASS  ${name}`);
      }
    }
  } finally {
    health.close();
    gateway.close();
  }
  console.log(`node client: ${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

module.exports = { main, loadProtos };

if (require.main === module) {
  main(process.argv[2] || DEFAULT_ADDRESS).then(
    (code) => { process.exitCode = code; },
    (e) => {
      console.error(e);
      console.log('node client: 0 passed, 2 failed');
      process.exitCode = 1;
    });
}
