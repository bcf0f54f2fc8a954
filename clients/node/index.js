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
function loadPackage() {
  if (!cachedPackage) {
    const def = protoLoader.loadSync('gpuadvisor/gateway/v1/gateway.proto',
                                     {...LOADER_OPTIONS, includeDirs: [protoDir()]});
    cachedPackage = grpc.loadPackageDefinition(def);
  }
  return cachedPackage;
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

module.exports = {GatewayClient, GatewayError, LOADER_OPTIONS, protoDir, tlsCredentials};
