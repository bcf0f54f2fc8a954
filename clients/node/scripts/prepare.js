#!/usr/bin/env node
// Runs on `npm install` / `npm pack` in clients/node: copies the contracts
// from the repository's proto/ into ./proto (shipped in the package) and
// generates TypeScript declarations for them into ./types with
// proto-loader's generator (then tsc --emitDeclarationOnly), using the same
// loader options as index.js, so the types follow the .proto files by
// construction.
'use strict';
const fs = require('fs');
const path = require('path');
const {execFileSync} = require('child_process');

const here = path.join(__dirname, '..');
const repoProto = path.join(here, '..', '..', 'proto');
const ownProto = path.join(here, 'proto');
if (fs.existsSync(path.join(repoProto, 'gpuadvisor'))) {
  fs.rmSync(ownProto, {recursive: true, force: true});
  fs.cpSync(repoProto, ownProto, {recursive: true, filter: (p) => fs.statSync(p).isDirectory() || p.endsWith('.proto')});
}
if (!fs.existsSync(path.join(ownProto, 'gpuadvisor'))) {
  console.error('gpu-advisor-client: no protos found (build from the repository checkout)');
  process.exit(1);
}
const generator = require.resolve('@grpc/proto-loader/build/bin/proto-loader-gen-types.js');
fs.rmSync(path.join(here, 'types'), {recursive: true, force: true});
execFileSync(process.execPath, [generator,
  '--keepCase', '--longs=String', '--enums=String', '--defaults', '--oneofs', '--includeComments',
  '--grpcLib=@grpc/grpc-js', '-I', ownProto, '-O', path.join(here, 'types'),
  'gpuadvisor/gateway/v1/gateway.proto'], {stdio: 'inherit'});
// Declarations only (.d.ts), so consumers' compilers read them as library types.
const typesDir = path.join(here, 'types');
const sources = [];
const walk = (dir) => fs.readdirSync(dir, {withFileTypes: true}).forEach((e) => {
  const p = path.join(dir, e.name);
  if (e.isDirectory()) walk(p);
  else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) sources.push(p);
});
walk(typesDir);
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '--declaration', '--emitDeclarationOnly',
  '--skipLibCheck', '--module', 'commonjs', '--target', 'es2020', '--moduleResolution', 'node', ...sources],
  {stdio: 'inherit'});
sources.forEach((p) => fs.rmSync(p));
console.log(`gpu-advisor-client: protos copied, ${sources.length} type declarations generated in types/`);
