#!/usr/bin/env python3
"""A loopback TCP proxy that holds every request for a fixed delay before
passing it on: a far server on a near machine, for the remote-pack
benchmarks (tools/bench/remote_flight.sh, tools/demo_http.sh).

    latency_proxy.py LISTEN_PORT TARGET_PORT DELAY_MS

The delay applies to each request (each chunk the client sends), so an
HTTP keep-alive connection pays it once per request, as over a real link.
"""
import asyncio
import sys

LISTEN, TARGET, DELAY = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) / 1000.0


async def pipe(reader, writer, delay):
    try:
        while data := await reader.read(65536):
            if delay:
                await asyncio.sleep(delay)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(client_reader, client_writer):
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", TARGET)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, server_writer, DELAY), pipe(server_reader, client_writer, 0))


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", LISTEN)
    async with server:
        await server.serve_forever()


asyncio.run(main())
