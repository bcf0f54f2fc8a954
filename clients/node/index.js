// gpu-advisor-client: a promise-based GatewayService client for Node.
//
//   const {GatewayClient} = require('gpu-advisor-client');
//   const advisor = new GatewayClient('127.0.0.1:50050');
//   const answer = await advisor.recommend({workload: {task: 'TASK_LORA',
//     model: {preset: 'llama-3.1-8b'}, train_tokens: 5e7, sequence_length: 2048}});
//
// Messages are plain objects shaped by the .proto files (proto field names,
// enums as names, 64-bit integers as decimal strings, defaults filled in);
// index.d.ts types them with declarations generated from the same files.
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// The loader options the generated types assume (scripts/prepare.js).
const LOADER_OPTIONS = {keepCase: true, longs: String, enums: String, defaults: true, oneofs: true};

function protoDir() {
  const own = path.join(__dirname, 'proto');  // shipped in the package
  if (fs.existsSync(path.join(own, 'gpuadvisor'))) return own;
  return path.join(__dirname, '..', '..', 'proto');  // a repository checkout
}

let cachedPackage = null;
let cachedDefinition = null;
function loadPackage() {
  if (!cachedPackage) {
    cachedDefinition = protoLoader.loadSync('gpuadvisor/gateway/v1/gateway.proto',
                                            {...LOADER_OPTIONS, includeDirs: [protoDir()]});
    cachedPackage = grpc.loadPackageDefinition(cachedDefinition);
  }
  return cachedPackage;
}

// ---------- request checks: no key is dropped silently ----------
// grpc-js serializes only the fields it knows and drops every other key, so a
// misspelt or camelCase key (`trainTokens`, `max_total_usd` in the wrong
// message) would be a request without it, answered as if it were not given.
// checkRequest walks the request against the message descriptors and throws
// for any key that is not a field of its message, as the HTTP API rejects it.

// The full name of `typeName` as protobuf resolves it from message `scope`
// (innermost scope first), or null.
function resolveType(definition, scope, typeName) {
  if (typeName.startsWith('.')) return definition[typeName.slice(1)] ? typeName.slice(1) : null;
  const parts = scope.split('.');
  for (let i = parts.length; i >= 0; i--) {
    const name = parts.slice(0, i).concat(typeName).join('.');
    if (definition[name] && definition[name].type) return name;
  }
  return null;
}

const camelCase = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

function editDistance(a, b) {
  let row = Array.from({length: b.length + 1}, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

// Field names close to `key`: one contains the other, or two edits apart.
function closest(key, names) {
  const want = key.toLowerCase().replace(/[_-]/g, '');
  return names.filter((n) => {
    const have = n.toLowerCase().replace(/_/g, '');
    return have.includes(want) || want.includes(have) || editDistance(have, want) <= 2;
  }).slice(0, 3);
}

function checkMessage(definition, typeName, value, path) {
  const where = path || 'request';
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgument(`${where}: must be an object (message ${typeName})`);
  }
  const type = definition[typeName].type;
  const fields = new Map(type.field.map((f) => [f.name, f]));
  for (const key of Object.keys(value)) {
    const keyPath = path ? `${path}.${key}` : key;
    const field = fields.get(key);
    if (!field) {
      const proto = type.field.find((f) => camelCase(f.name) === key);
      const hint = proto ? `; this client takes proto field names: ${proto.name}`
        : closest(key, [...fields.keys()]).length
          ? `; did you mean ${closest(key, [...fields.keys()]).join(', ')}?`
          : `; fields of ${typeName}: ${[...fields.keys()].join(', ')}`;
      throw invalidArgument(`${keyPath}: unknown field${hint}`);
    }
    const v = value[key];
    if (v === undefined || v === null || field.type !== 'TYPE_MESSAGE') continue;
    const nested = resolveType(definition, typeName, field.typeName);
    if (!nested) continue;  // a type this check cannot see: grpc-js still checks its shape
    if (definition[nested].type.options && definition[nested].type.options.mapEntry) continue;
    if (field.label === 'LABEL_REPEATED') {
      if (!Array.isArray(v)) throw invalidArgument(`${keyPath}: must be a list`);
      v.forEach((item, i) => checkMessage(definition, nested, item, `${keyPath}[${i}]`));
    } else {
      checkMessage(definition, nested, v, keyPath);
    }
  }
}

function invalidArgument(message) {
  return new GatewayError({code: grpc.status.INVALID_ARGUMENT, details: message});
}

// Throws GatewayError (INVALID_ARGUMENT, `field` = the key's path) for a key
// of `request` that is not a field of `method`'s request message.
function checkRequest(method, request) {
  loadPackage();
  const service = cachedDefinition['gpuadvisor.gateway.v1.GatewayService'];
  const requestType = service[method].requestType.type.name;
  const full = resolveType(cachedDefinition, 'gpuadvisor.gateway.v1.GatewayService', requestType) ||
    Object.keys(cachedDefinition).find((k) => k.endsWith('.' + requestType));
  checkMessage(cachedDefinition, full, request, '');
}

// A failed call: the gRPC code (number and name), the message, and the
// request field it names ("workload.model.params") or null.
class GatewayError extends Error {
  constructor(serviceError) {
    const code = serviceError.code;
    const name = Object.keys(grpc.status).find((k) => grpc.status[k] === code) || String(code);
    const message = serviceError.details || serviceError.message || '';
    super(`${name}: ${message}`);
    this.name = 'GatewayError';
    this.code = code;
    this.status = name;
    this.details = message;
    const head = message.split(': ')[0];
    this.field = message.includes(': ') && /^[A-Za-z_][A-Za-z0-9_.[\]]*$/.test(head) ? head : null;
  }
}

// TLS channel credentials from PEM files (paths): ca verifies the server
// (the system roots when omitted); cert and key are a client certificate for
// servers that ask for one (mTLS), both or neither.
function tlsCredentials({ca, cert, key} = {}) {
  if (Boolean(cert) !== Boolean(key)) throw new Error('cert and key: give both or neither');
  const read = (path) => (path ? fs.readFileSync(path) : null);
  return grpc.credentials.createSsl(read(ca), read(key), read(cert));
}

class GatewayClient {
  // target: "host:port"; options.timeoutMs: deadline of each call (default
  // 10 s); options.credentials: grpc.ChannelCredentials; or options.ca,
  // options.cert, options.key: PEM file paths for TLS (see tlsCredentials).
  // Default: plaintext.
  constructor(target = '127.0.0.1:50050', options = {}) {
    const Service = loadPackage().gpuadvisor.gateway.v1.GatewayService;
    let credentials = options.credentials;
    if (!credentials && (options.ca || options.cert || options.key)) credentials = tlsCredentials(options);
    this.client = new Service(target, credentials || grpc.credentials.createInsecure());
    this.timeoutMs = options.timeoutMs || 10000;
  }

  call(method, request) {
    try {
      checkRequest(method, request);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => {
      this.client[method](request, {deadline: new Date(Date.now() + this.timeoutMs)}, (err, reply) => {
        if (err) reject(new GatewayError(err));
        else resolve(reply);
      });
    });
  }

  waitReady(timeoutMs = 30000) {
    return new Promise((resolve, reject) => {
      this.client.waitForReady(new Date(Date.now() + timeoutMs), (err) => (err ? reject(err) : resolve()));
    });
  }

  recommend(request) { return this.call('Recommend', request); }
  estimate(request) { return this.call('Estimate', request); }
  offers(request = {}) { return this.call('ListOffers', request); }
  gpus() { return this.call('ListGpus', {}); }
  models() { return this.call('ListModels', {}); }
  close() { this.client.close(); }
}

module.exports = {GatewayClient, GatewayError, LOADER_OPTIONS, checkRequest, protoDir, tlsCredentials};
