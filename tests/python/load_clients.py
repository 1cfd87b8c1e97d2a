"""Raw asyncio HTTP clients for the server load tests: thousands of streaming requests
without a client library's pool or limits in the way, each able to stop reading or drop
its connection at any point, and small helpers for /metrics and the server's threads."""
import asyncio
import json
import pathlib
import time
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


def wait_idle(base_url, timeout_s=10):
    """Polls /metrics until nothing runs, waits or holds KV blocks; returns the last scrape and
    that (running, waiting, KV usage) state."""
    deadline = time.monotonic() + timeout_s
    while True:
        m = metrics(base_url)
        state = (value(m, "pagoda:num_requests_running"), value(m, "pagoda:num_requests_waiting"),
                 value(m, "pagoda:kv_cache_usage_perc"))
        if state == (0, 0, 0) or time.monotonic() > deadline:
            return m, state
        time.sleep(0.1)


def hang_up_storm(base_url, body, plan, concurrency):
    """Opens one stream of /v1/completions with body per (chunks to read, RST?) in plan, at most
    concurrency at once, reads that many chunks and hangs up (RST or FIN); returns how many
    streams produced a chunk before being cut."""
    got_chunks = 0

    async def one(limit, cut_after, reset):
        nonlocal got_chunks
        async with limit:
            reader, writer, status = await open_stream(base_url, "/v1/completions", body)
            assert status == 200
            seen = 0
            if cut_after > 0:
                async for _ in read_events(reader):
                    seen += 1
                    if seen == cut_after:
                        break
            got_chunks += seen > 0
            if reset:
                writer.transport.abort()  # RST
            else:
                writer.close()  # FIN

    async def storm():
        limit = asyncio.Semaphore(concurrency)
        await asyncio.gather(*(one(limit, k, r) for k, r in plan))

    asyncio.run(storm())
    return got_chunks
