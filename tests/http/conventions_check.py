#!/usr/bin/python3
"""Checks the gateway's HTTP conventions and limits (conventions_test.sh).

  conventions_check.py HTTP_HOST:PORT METRICS_HOST:PORT GATEWAY_LOG

The gateway runs with 1 s header/body deadlines, 64 KiB bodies, at most 50
header fields, 3 calls then 1/s per client, CORS for https://ui.example.com and
127.0.0.1 as its trusted proxy. Direct calls from this script (127.0.0.1) name
a fresh client in X-Forwarded-For, so the rate limit only bites where a check
wants it to.
"""
import http.client
import http.server
import itertools
import json
import socket
import sys
import threading
import time
import urllib.request

HOST, PORT = sys.argv[1].rsplit(":", 1)
PORT = int(PORT)
METRICS, LOG = sys.argv[2], sys.argv[3]
passed = failed = 0
fresh = itertools.count(1)


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS  {name}")
    else:
        failed += 1
        print(f"FAIL  {name} {detail}")


def call(method, path, body=None, headers=None, source=None, port=PORT, client=True):
    """One request on a fresh connection: (status, headers dict, body bytes)."""
    headers = dict(headers or {})
    if client and source is None:
        headers.setdefault("X-Forwarded-For", f"198.51.100.{next(fresh) % 250 + 1}")
    conn = http.client.HTTPConnection(HOST, port, timeout=10,
                                      source_address=(source, 0) if source else None)
    conn.request(method, path, body=body, headers=headers)
    res = conn.getresponse()
    data = res.read()
    conn.close()
    return res.status, {k.lower(): v for k, v in res.getheaders()}, data


def status_body(data):
    """(code, reason, field) of a google.rpc.Status body."""
    d = json.loads(data)
    details = d.get("details", [])
    reason = next((x["reason"] for x in details if "reason" in x), None)
    field = next((x["field_violations"][0]["field"] for x in details if x.get("field_violations")), None)
    return d["code"], reason, field


def raw(payload, wait=3.0, dribble=None, prefix=b""):
    """Sends `prefix` at once, then `payload` at once or a byte every `dribble`
    seconds; returns (answer, seconds until the server closed)."""
    s = socket.create_connection((HOST, PORT))
    s.sendall(prefix)
    start = time.monotonic()
    answer = b""
    s.settimeout(0.05)
    sent = 0
    while time.monotonic() - start < wait:
        if dribble is None and sent == 0:
            s.sendall(payload)
            sent = len(payload)
        elif dribble is not None and sent < len(payload):
            try:
                s.send(payload[sent:sent + 1])
                sent += 1
            except OSError:
                pass
            time.sleep(dribble)
        try:
            chunk = s.recv(65536)
            if not chunk:
                s.close()
                return answer.decode(errors="replace"), time.monotonic() - start
            answer += chunk
        except socket.timeout:
            pass
        except OSError:
            break
    s.close()
    return answer.decode(errors="replace"), time.monotonic() - start


LORA = json.dumps({"workload": {"task": "lora", "model": {"preset": "llama-3.1-8b"},
                                "train_tokens": 5e7, "sequence_length": 2048}, "max_results": 2})

# --- every status path, each with its google.rpc.Status body ---
st, h, data = call("POST", "/v1/recommend", LORA)
check("200: \"task\": \"lora\" (the CLI's short form) is accepted", st == 200 and json.loads(data)["recommendations"], data[:200])
st, h, data = call("POST", "/v1/recommend", json.dumps(
    {"workload": {"task": "qlora", "model": {"preset": "llama-3.1-8b"}, "train_tokens": 5e7},
     "constraints": {"purchase_options": ["on-demand"]}}))
check("200: \"on-demand\" in a repeated enum", st == 200, data[:200])
st, h, data = call("POST", "/v1/recommend", '{"workload": {"task": "TASK_LORA", "model": {"params": -1}, "train_tokens": 5e7}}')
code, reason, field = status_body(data)
check("400: google.rpc.Status with the field violation",
      st == 400 and code == 3 and reason == "INVALID_ARGUMENT" and field.startswith("workload.model"), data)
st, h, data = call("POST", "/v1/recommend", '{"workload": {"task": "napping"}}')
check("400: an unknown enum names workload.task", st == 400 and status_body(data)[2] == "workload.task", data)
st, h, data = call("POST", "/v1/recommend", '{"workload": {"task": "lora", "model": {"preset": "no-such"}, "train_tokens": 1e6}}')
check("404: unknown preset, code 5", st == 404 and status_body(data)[:2] == (5, "NOT_FOUND"), data)
st, h, data = call("GET", "/v1/nothing")
check("404: unknown path", st == 404 and status_body(data)[0] == 5, data)
st, h, data = call("GET", "/v1/recommend")
check("405: wrong method, with Allow", st == 405 and h.get("allow") == "POST, OPTIONS" and status_body(data)[0] == 12, (st, h))
st, h, data = call("DELETE", "/v1/offers")
check("405: DELETE on a GET route", st == 405 and "GET" in h.get("allow", ""), (st, h))
st, h, data = call("POST", "/v1/recommend", b" " * 70000)
check("413: a plain body over the limit", st == 413 and status_body(data)[:2] == (8, "RESOURCE_EXHAUSTED"), (st, data[:200]))
answer, took = raw(b"POST /v1/recommend HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                   (b"1000\r\n" + b" " * 0x1000 + b"\r\n") * 40)
check("413: a chunked body over the limit", answer.startswith("HTTP/1.1 413") and '"code":8' in answer, answer[:200])
answer, took = raw(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(60)) + b"\r\n")
check("431: more header fields than the limit", answer.startswith("HTTP/1.1 431"), answer[:200])
answer, took = raw(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20000 + b"\r\n\r\n")
check("431: a header set over its size", answer.startswith("HTTP/1.1 431"), answer[:200])
answer, took = raw(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"s" * 100 + b"\r\n\r\n", wait=4, dribble=0.05)
check("408: headers dribbled past the 1 s deadline", answer.startswith("HTTP/1.1 408") and 0.9 < took < 2.5, (answer[:100], took))
answer, took = raw(b" " * 500, wait=4, dribble=0.05,
                   prefix=b"POST /v1/recommend HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n")
check("408: a body dribbled past the 1 s deadline", "HTTP/1.1 408" in answer and "body: not received" in answer
      and 0.9 < took < 2.5, (answer[:300], took))
answer, took = raw(b"GARBAGE\r\n\r\n")
check("400: a malformed request line", answer.startswith("HTTP/1.1 400"), answer[:100])

# --- request ids ---
st, h, data = call("POST", "/v1/recommend", '{"workload": {"task": "nope"}}', {"X-Request-Id": "conventions-check-7"})
check("X-Request-Id is echoed", h.get("x-request-id") == "conventions-check-7", h)
time.sleep(0.2)
check("X-Request-Id is in the gateway's log line of the failed call",
      "request_id=conventions-check-7" in open(LOG).read())
st, h, data = call("GET", "/v1/health")
check("a request id is made when none is sent", len(h.get("x-request-id", "")) == 16, h)

# --- CORS: off but for the configured origin ---
st, h, data = call("GET", "/v1/models", headers={"Origin": "https://ui.example.com"})
check("CORS: the allowed origin is named", h.get("access-control-allow-origin") == "https://ui.example.com", h)
st, h, data = call("GET", "/v1/models", headers={"Origin": "https://other.example.com"})
check("CORS: another origin gets no CORS header", "access-control-allow-origin" not in h, h)
st, h, data = call("OPTIONS", "/v1/recommend", headers={"Origin": "https://ui.example.com", "Access-Control-Request-Method": "POST"})
check("CORS: a preflight gets 204 with the methods", st == 204 and "POST" in h.get("access-control-allow-methods", ""), (st, h))


# --- per-client limits through a local reverse proxy ---
class Proxy(http.server.BaseHTTPRequestHandler):
    """A minimal reverse proxy: appends its client's address to X-Forwarded-For."""
    def _forward(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        prior = self.headers.get("X-Forwarded-For")
        headers["X-Forwarded-For"] = (prior + ", " if prior else "") + self.client_address[0]
        conn = http.client.HTTPConnection(HOST, PORT, timeout=10, source_address=("127.0.0.1", 0))
        conn.request(self.command, self.path, body=body or None, headers=headers)
        res = conn.getresponse()
        data = res.read()
        self.send_response(res.status)
        for k, v in res.getheaders():
            if k.lower() not in ("connection", "content-length", "transfer-encoding"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    do_GET = do_POST = _forward

    def log_message(self, *args):
        pass


proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
threading.Thread(target=proxy.serve_forever, daemon=True).start()
pport = proxy.server_address[1]
via = lambda source: call("POST", "/v1/recommend", LORA, source=source, port=pport)[0]
a = [via("127.0.0.5") for _ in range(5)]
b = [via("127.0.0.6") for _ in range(3)]
check("proxy: client A gets its 3-call burst, then 429", a[:3] == [200] * 3 and 429 in a[3:], a)
check("proxy: client B behind the same proxy has its own bucket", b == [200] * 3, b)
# Straight from an address that is not a trusted proxy, X-Forwarded-For is ignored:
# changing it does not give a new bucket.
spoofed = [call("POST", "/v1/recommend", LORA, {"X-Forwarded-For": f"203.0.113.{i}"}, source="127.0.0.9",
                client=False)[0] for i in range(5)]
check("a forged X-Forwarded-For from an untrusted peer buys no new bucket", spoofed[:3] == [200] * 3 and 429 in spoofed[3:], spoofed)
st, h, data = call("POST", "/v1/recommend", LORA, {"X-Forwarded-For": "203.0.113.99"}, source="127.0.0.9", client=False)
check("429: google.rpc.Status RESOURCE_EXHAUSTED", st == 429 and status_body(data)[:2] == (8, "RESOURCE_EXHAUSTED"), data)
proxy.shutdown()

# --- metrics: requests by route and status ---
text = urllib.request.urlopen(f"http://{METRICS}/metrics", timeout=5).read().decode()
for needle in ['gpuadvisor_http_requests_total{code="405",route="/v1/recommend"}',
               'gpuadvisor_http_requests_total{code="429",route="/v1/recommend"}',
               'gpuadvisor_http_requests_total{code="404",route="other"}',
               'gpuadvisor_http_connections_closed_total{reason="header_too_large"} 2']:
    check(f"metric {needle}", needle in text)
# The dribbled headers; other connections that came and went silently may add to it.
timeouts = [float(line.split()[-1]) for line in text.splitlines()
            if line.startswith('gpuadvisor_http_connections_closed_total{reason="header_timeout"}')]
check("metric gpuadvisor_http_connections_closed_total{reason=\"header_timeout\"} >= 1",
      timeouts and timeouts[0] >= 1, timeouts)
check("metric gpuadvisor_http_connections_closed_total{reason=\"body_timeout\"} 1",
      'gpuadvisor_http_connections_closed_total{reason="body_timeout"} 1' in text)

print(f"conventions: {passed} passed, {failed} failed")
sys.exit(0 if failed == 0 and passed > 0 else 1)
