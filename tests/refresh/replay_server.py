#!/usr/bin/env python3
"""HTTPS replay server for the refresher's tests.

Serves the recorded files of a folder (copies of ../shared/fixtures) over
TLS, with ETag / If-None-Match, and with a fault per path chosen by the test
through <folder>/modes.json, read on every request:

  {"/vast.json": "ok" | "timeout" | "500" | "truncated" | "schema" | "jump" | "empty"}

  timeout    waits 10 s before answering (longer than the refresher's timeout)
  500        HTTP 500
  truncated  announces the whole Content-Length, sends half the body, closes
  schema     renames the first column / key the importer needs
             (CSV: InstanceType -> Instance; JSON: dph_base -> dph)
  jump       every price x10 (CSV Price/SpotPrice, JSON dph_base/min_bid)
  empty      an empty page (CSV: the header only; JSON: [])

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

ROOT, CERT, KEY = sys.argv[1], sys.argv[2], sys.argv[3]


def mode_of(path):
    try:
        with open(os.path.join(ROOT, "modes.json")) as f:
            return json.load(f).get(path, "ok")
    except (OSError, ValueError):
        return "ok"


def transform_csv(body, mode):
    rows = list(csv.reader(io.StringIO(body.decode())))
    header = rows[0]
    if mode == "schema":
        header[header.index("InstanceType")] = "Instance"
    if mode == "jump":
        for name in ("Price", "SpotPrice"):
            i = header.index(name)
            for r in rows[1:]:
                if r[i]:
                    r[i] = "%.4f" % (float(r[i]) * 10)
    if mode == "empty":
        rows = [header]
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue().encode()


def transform_json(body, mode):
    offers = json.loads(body)
    wrapped = isinstance(offers, dict)
    items = offers["offers"] if wrapped else offers
    for o in items:
        if mode == "schema":
            o["dph"] = o.pop("dph_base")
        if mode == "jump":
            o["dph_base"] *= 10
            o["min_bid"] *= 10
    if mode == "empty":
        items = []
    return json.dumps({"offers": items} if wrapped else items).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("replay: %s %s\n" % (self.path, fmt % args))

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        mode = mode_of(path)
        file = os.path.join(ROOT, path.lstrip("/"))
        if not os.path.isfile(file):
            self.send_error(404)
            return
        if mode == "timeout":
            time.sleep(10)
        if mode == "500":
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with open(file, "rb") as f:
            body = f.read()
        if mode in ("schema", "jump", "empty"):
            body = transform_csv(body, mode) if file.endswith(".csv") else transform_json(body, mode)
        etag = '"%s"' % hashlib.sha256(body).hexdigest()[:16]
        if mode == "ok" and self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", etag)
        self.end_headers()
        if mode == "truncated":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERT, KEY)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("replay listening port=%d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
