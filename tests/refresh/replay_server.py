#!/usr/bin/env python3
"""HTTPS replay server for the refresher's tests.

Serves the recorded files of a folder (copies of the fixtures vendored under tests/data) over
TLS, with ETag / If-None-Match, and with a fault per path chosen by the test
through <folder>/modes.json, read on every request:

  {"/vast.json": "ok" | "timeout" | "500" | "truncated" | "schema" | "jump" | "empty"
                 | "flaky"}

  timeout    waits 10 s before answering (longer than the refresher's timeout)
  500        HTTP 500
  truncated  announces the whole Content-Length, sends half the body, closes
  schema     renames the first column / key the importer needs
             (CSV: InstanceType / instance_name -> Instance; JSON: dph_base -> dph,
             retailPrice -> price, currencyCodeLocalizations -> prices)
  jump       every price x10 (CSV Price/SpotPrice/price, JSON dph_base/min_bid,
             retailPrice/unitPrice, OCI's prices[].value)
  empty      an empty page (CSV: the header only; JSON: no offers / Items / items)
  flaky      HTTP 503 on every other request (the first fails): a retry succeeds

A .zip file (gpuhunt's catalog.zip) is unzipped, each CSV member transformed,
and zipped again. Paged files: "?...$skip=N" serves <file without .json>.skipN.json.
Other (JSON) bodies have "https://prices.azure.com:443" replaced by the server's own
address (Azure's NextPageLink). A file with a sibling "<file>.last-modified" is served with
that text as its Last-Modified header (as S3 serves gpuhunt's catalog.zip); others with
none. Every request is appended to <folder>/requests.log
as "<path?query> inm=<If-None-Match or -> status=<code>".

Usage: replay_server.py DIR CERT KEY   (prints "replay listening port=N")
"""
import csv
import hashlib
import http.server
import io
import json
import os
import ssl
import sys
import time
import urllib.parse
import zipfile

ROOT, CERT, KEY = sys.argv[1], sys.argv[2], sys.argv[3]


def mode_of(path):
    try:
        with open(os.path.join(ROOT, "modes.json")) as f:
            return json.load(f).get(path, "ok")
    except (OSError, ValueError):
        return "ok"


PRICE_KEYS = {"dph_base", "min_bid", "retailPrice", "unitPrice"}
SCHEMA_KEYS = {"dph_base": "dph", "retailPrice": "price", "currencyCodeLocalizations": "prices"}
FLAKY = {}


def transform_csv(body, mode):
    rows = list(csv.reader(io.StringIO(body.decode())))
    header = rows[0]
    if mode == "schema":
        key = "InstanceType" if "InstanceType" in header else "instance_name"
        header[header.index(key)] = "Instance"
    if mode == "jump":
        for name in ("Price", "SpotPrice", "price"):
            if name not in header:
                continue
            i = header.index(name)
            for r in rows[1:]:
                if r[i]:
                    r[i] = "%.4f" % (float(r[i]) * 10)
    if mode == "empty":
        rows = [header]
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue().encode()


def transform_zip(body, mode):
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(body)) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            data = src.read(name)
            dst.writestr(name, transform_csv(data, mode) if name.endswith(".csv") else data)
    return out.getvalue()


def walk(node, mode):
    """Applies `mode` to every object of a JSON document, in place."""
    if isinstance(node, list):
        for x in node:
            walk(x, mode)
        return
    if not isinstance(node, dict):
        return
    for key in list(node):
        if mode == "jump" and key in PRICE_KEYS and isinstance(node[key], (int, float)):
            node[key] *= 10
        if mode == "jump" and key == "value" and node.get("model") == "PAY_AS_YOU_GO":
            node[key] *= 10
        if mode == "schema" and key in SCHEMA_KEYS:
            node[SCHEMA_KEYS[key]] = node.pop(key)
        if key in node:
            walk(node[key], mode)


def transform_json(body, mode):
    doc = json.loads(body)
    if mode == "empty":
        if isinstance(doc, list):
            return b"[]"
        for key in ("offers", "Items", "items"):
            if key in doc:
                doc[key] = []
        if "NextPageLink" in doc:
            doc["NextPageLink"] = None
    else:
        walk(doc, mode)
    return json.dumps(doc).encode()


def transform(file, body, mode):
    if file.endswith(".csv"):
        return transform_csv(body, mode)
    if file.endswith(".zip"):
        return transform_zip(body, mode)
    return transform_json(body, mode)


def file_for(path, query):
    """The file of a request: <path>, or for "$skip=N" its .skipN page."""
    file = os.path.join(ROOT, path.lstrip("/"))
    skip = urllib.parse.parse_qs(query).get("$skip")
    if skip and skip[0] != "0":
        base = file[:-5] if file.endswith(".json") else file
        file = "%s.skip%s.json" % (base, skip[0])
    return file


def log(path, inm, status):
    with open(os.path.join(ROOT, "requests.log"), "a") as f:
        f.write("%s inm=%s status=%d\n" % (path, inm or "-", status))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("replay: %s %s\n" % (self.path, fmt % args))

    def reply(self, status, body=b"", etag=None, cut=False, last_modified=None):
        log(self.path, self.headers.get("If-None-Match"), status)
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        if etag:
            self.send_header("ETag", etag)
        if last_modified:
            self.send_header("Last-Modified", last_modified)
        self.end_headers()
        if cut:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def do_GET(self):
        path, _, query = self.path.partition("?")
        mode = mode_of(path)
        file = file_for(path, query)
        if not os.path.isfile(file):
            self.reply(404)
            return
        if mode == "timeout":
            time.sleep(10)
        if mode == "flaky":
            FLAKY[path] = FLAKY.get(path, 0) + 1
            if FLAKY[path] % 2 == 1:
                self.reply(503)
                return
        if mode == "500":
            self.reply(500)
            return
        with open(file, "rb") as f:
            body = f.read()
        if not file.endswith((".csv", ".zip")):
            host = "https://127.0.0.1:%d" % self.server.server_address[1]
            body = body.replace(b"https://prices.azure.com:443", host.encode())
        if mode in ("schema", "jump", "empty"):
            body = transform(file, body, mode)
        etag = '"%s"' % hashlib.sha256(body).hexdigest()[:16]
        last_modified = None
        if os.path.isfile(file + ".last-modified"):
            with open(file + ".last-modified") as f:
                last_modified = f.read().strip()
        if mode in ("ok", "flaky") and self.headers.get("If-None-Match") == etag:
            self.reply(304, etag=etag, last_modified=last_modified)
            return
        self.reply(200, body, etag=etag, cut=mode == "truncated", last_modified=last_modified)


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERT, KEY)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("replay listening port=%d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
