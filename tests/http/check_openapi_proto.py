#!/usr/bin/env python3
"""Checks the served OpenAPI document against the proto contract.

  check_openapi_proto.py openapi.json DESCRIPTOR_SET

DESCRIPTOR_SET is `protoc --include_imports --descriptor_set_out` of
gateway.proto, built independently of the gateway. For every operation that
names a gRPC method (operationId = GatewayService method), the request and
response messages and every message and enum they reach must be schemas, with
one property per proto field typed by protobuf's JSON mapping; GET operations
must take one query parameter per scalar leaf of the request. Exits 1 listing
every mismatch.
"""
import json
import sys

from google.protobuf import descriptor_pb2

F = descriptor_pb2.FieldDescriptorProto
JSON_TYPE = {
    F.TYPE_DOUBLE: "number", F.TYPE_FLOAT: "number",
    F.TYPE_INT32: "integer", F.TYPE_SINT32: "integer", F.TYPE_SFIXED32: "integer",
    F.TYPE_UINT32: "integer", F.TYPE_FIXED32: "integer",
    F.TYPE_INT64: "string", F.TYPE_SINT64: "string", F.TYPE_SFIXED64: "string",
    F.TYPE_UINT64: "string", F.TYPE_FIXED64: "string",
    F.TYPE_BOOL: "boolean", F.TYPE_STRING: "string", F.TYPE_BYTES: "string",
}


def main():
    doc = json.load(open(sys.argv[1]))
    fds = descriptor_pb2.FileDescriptorSet()
    fds.ParseFromString(open(sys.argv[2], "rb").read())
    messages, enums, methods = {}, {}, {}

    def walk(prefix, msg):
        name = f"{prefix}.{msg.name}"
        messages[name] = msg
        for nested in msg.nested_type:
            walk(name, nested)
        for e in msg.enum_type:
            enums[f"{name}.{e.name}"] = e

    for f in fds.file:
        for m in f.message_type:
            walk(f.package, m)
        for e in f.enum_type:
            enums[f"{f.package}.{e.name}"] = e
        for s in f.service:
            for m in s.method:
                methods[m.name] = (m.input_type.lstrip("."), m.output_type.lstrip("."))

    schemas = doc["components"]["schemas"]
    errors = []
    checked = set()

    def unref(schema):
        if "allOf" in schema:
            schema = schema["allOf"][0]
        return schema

    def check_message(name):
        if name in checked:
            return
        checked.add(name)
        if name not in schemas:
            errors.append(f"schema {name}: missing")
            return
        props = schemas[name].get("properties", {})
        for field in messages[name].field:
            where = f"{name}.{field.name}"
            if field.name not in props:
                errors.append(f"{where}: no property")
                continue
            schema = unref(props[field.name])
            if field.label == F.LABEL_REPEATED:
                if schema.get("type") != "array":
                    errors.append(f"{where}: repeated but type {schema.get('type')}")
                    continue
                schema = unref(schema["items"])
            if field.type in (F.TYPE_MESSAGE, F.TYPE_ENUM):
                target = field.type_name.lstrip(".")
                if schema.get("$ref") != f"#/components/schemas/{target}":
                    errors.append(f"{where}: expected $ref to {target}, got {schema}")
                if field.type == F.TYPE_MESSAGE:
                    check_message(target)
                else:
                    values = [v.name for v in enums[target].value]
                    if schemas.get(target, {}).get("enum") != values:
                        errors.append(f"enum {target}: values differ from the proto")
            elif schema.get("type") != JSON_TYPE[field.type]:
                errors.append(f"{where}: type {schema.get('type')}, expected {JSON_TYPE[field.type]}")
        extra = set(props) - {f.name for f in messages[name].field}
        if extra:
            errors.append(f"{name}: properties not in the proto: {sorted(extra)}")

    def leaves(name, prefix, depth=0):
        out = []
        for field in messages[name].field:
            if field.type == F.TYPE_MESSAGE:
                if field.label != F.LABEL_REPEATED and depth < 4:
                    out += leaves(field.type_name.lstrip("."), prefix + field.name + ".", depth + 1)
            else:
                out.append(prefix + field.name)
        return out

    operations = 0
    for path, item in doc["paths"].items():
        for verb, op in item.items():
            if op.get("operationId") not in methods:
                continue
            operations += 1
            request, response = methods[op["operationId"]]
            check_message(request)
            check_message(response)
            if verb == "get":
                params = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
                missing = set(leaves(request, "")) - params
                if missing:
                    errors.append(f"GET {path}: no query parameter for {sorted(missing)}")
            else:
                body = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                if body != f"#/components/schemas/{request}":
                    errors.append(f"{verb.upper()} {path}: body is {body}, expected {request}")
            ok = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
            if ok != f"#/components/schemas/{response}":
                errors.append(f"{verb.upper()} {path}: 200 is {ok}, expected {response}")

    if operations == 0:
        errors.append("no operation names a GatewayService method")
    for e in errors:
        print("MISMATCH", e)
    fields = sum(len(messages[m].field) for m in checked)
    print(f"openapi vs proto: {operations} operations, {len(checked)} messages, {fields} fields, "
          f"{len(errors)} mismatches")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
