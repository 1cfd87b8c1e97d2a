"""Raw asyncio HTTP clients for the server load tests: thousands of streaming requests
without a client library's pool or limits in the way, each able to stop reading or drop
its connection at any point, and small helpers for /metrics and the server's threads."""
import asyncio
import json
import pathlib
import urllib.parse
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def host_port(base_url):
    u = urllib.parse.urlparse(base_url)
    return u.hostname, u.port or 80


async def open_stream(base_url, path, body):
    """Sends a streaming POST; returns (reader, writer, status) once the head is read."""
    host, port = host_port(base_url)
    reader, writer = await asyncio.open_connection(host, port)
    data = json.dumps(body).encode()
    writer.write(f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"chunked" not in head.lower():
        raise AssertionError(f"expected a chunked stream, got {head!r}")
    return reader, writer, status


async def read_events(reader):
    """Yields each SSE `data:` payload of a chunked response until the stream ends."""
    buffer = b""
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.strip().split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return
        buffer += await reader.readexactly(size)
        await reader.readexactly(2)
        while b"\n\n" in buffer:
            message, buffer = buffer.split(b"\n\n", 1)
            for line in message.split(b"\n"):
                if line.startswith(b"data:"):
                    yield line[5:].strip().decode()


def metrics(base_url):
    """GET /metrics parsed by prometheus_client: {sample name: {labels tuple: value}}."""
    with urllib.request.urlopen(base_url + "/metrics", timeout=30) as r:
        assert r.headers["Content-Type"].startswith("text/plain")
        text = r.read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def value(m, name, **labels):
    """Sum of the samples of `name` whose labels include `labels`."""
    return sum(v for k, v in m.get(name, {}).items() if set(labels.items()) <= set(k))


def thread_count(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")
