#!/usr/bin/env python3
# A hostile agent: it tries every way out of its network namespace, says what each gave (one
# JSON object on stdout), then commits with the ready marker.
import http.client, json, os, socket, subprocess, urllib.error, urllib.request

allowed = int(os.environ["PROBE_ALLOWED_PORT"])
named = int(os.environ["PROBE_NAMED_PORT"])
blocked = int(os.environ["PROBE_BLOCKED_PORT"])
proxy = os.environ.get("HTTP_PROXY", "")
proxy_port = int(proxy.rsplit(":", 1)[1]) if proxy else 0
out = {"proxy": proxy}

def via_proxy(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    try:
        r = opener.open(url, timeout=10)
        return [r.status, r.read().decode()]
    except urllib.error.HTTPError as e:
        return [e.code, e.read().decode()]
    except Exception as e:
        return [0, type(e).__name__]

def direct(port):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /hello HTTP/1.0\r\nHost: x\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return "answered " + data.decode(errors="replace").split("\r\n")[0]
    except Exception as e:
        return "no connection: " + type(e).__name__
    finally:
        s.close()

out["allowed_via_proxy"] = via_proxy(f"http://127.0.0.1:{allowed}/hello")
out["blocked_via_proxy"] = via_proxy(f"http://127.0.0.1:{blocked}/secret")
out["named_by_address"] = via_proxy(f"http://127.0.0.1:{named}/hello")
out["named_by_name"] = via_proxy(f"http://localhost:{named}/hello")
out["allowed_direct"] = direct(allowed)
out["blocked_direct"] = direct(blocked)
try:
    socket.getaddrinfo("example.com", 443)
    out["dns"] = "resolved"
except Exception as e:
    out["dns"] = "failed"
c = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=10)
c.request("CONNECT", f"127.0.0.1:{blocked}")
out["connect_other_port"] = c.getresponse().status
c.close()
# A name with a NUL: a resolver reads it to the NUL (an allowed name's end, another host's
# start); the proxy refuses it whatever the allowlist or an audit says.
s = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
s.sendall(f"CONNECT localhost\0.example:{named} HTTP/1.1\r\n\r\n".encode())
out["nul_name"] = int(s.recv(64).split(b" ")[1])
s.close()
# A flood: more connections at once than a run may hold; the proxy stays up.
held = []
for _ in range(300):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", proxy_port))
        held.append(s)
    except Exception:
        break
for s in held:
    s.close()
out["after_flood"] = via_proxy(f"http://127.0.0.1:{allowed}/hello")[0]
print(json.dumps(out), flush=True)
marker = os.environ["COCODE_READY_MARKER"]
subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "probed\n\n" + marker], check=True)
