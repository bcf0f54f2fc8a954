// Validates an OpenAPI document against the OpenAPI 3 schema and resolves
// every $ref (@apidevtools/swagger-parser):
//   node tests/http/validate_openapi.js openapi.json
'use strict';
const path = require('path');
const SwaggerParser = require(path.join(__dirname, '../tools/node_modules/@apidevtools/swagger-parser'));

const file = process.argv[2];
if (!file) {
  console.error('usage: validate_openapi.js FILE');
  process.exit(2);
}
SwaggerParser.validate(file)
  .then((api) => {
    const paths = Object.keys(api.paths);
    if (paths.length === 0) throw new Error('no paths');
    console.log(`openapi: valid ${api.openapi} document, ${paths.length} paths, ` +
                `${Object.keys(api.components.schemas).length} schemas`);
  })
  .catch((err) => {
    console.error(`openapi: INVALID: ${err.message}`);
    process.exit(1);
  });
