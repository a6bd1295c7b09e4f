#!/usr/bin/env python3
"""Misbehaving Archives for bench/resolver.sh, on 127.0.0.1.

    peer.py silent PORT        accepts connections and holds them, never answering
    peer.py slow PORT [SECS]   answers every request after SECS (default 1) seconds, as an
                               Archive that holds nothing would: 200 with an empty body
                               (and "confirmation yes" to inclusionConfirmationRequest)
    peer.py many FIRST COUNT   COUNT Archives that hold nothing, for bench/resolver-scale.sh:
                               listens on COUNT ports (FIRST, FIRST+1, …; FIRST 0: ports
                               the system picks) and answers every request at once as
                               `slow` does; prints each port, one a line, before "ready"

Prints "ready" on standard output once it listens; runs until killed.
"""
import asyncio
import socket
import sys


def silent(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(4096)
    print("ready", flush=True)
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)


def slow(port, delay):
    # asyncio, not a thread per connection: under a fan-out it holds a thousand
    # requests at once without taking the CPUs from the others.
    async def serve(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                line = head.split(b"\r\n", 1)[0]
                await asyncio.sleep(delay)
                body = b"confirmation yes" if b"inclusionConfirmationRequest" in line else b""
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(serve, "127.0.0.1", port, backlog=4096,
                                            reuse_address=True)
        print("ready", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def many(first, count):
    # One process, one event loop, COUNT listening sockets: a protocol rather than streams,
    # as a miss at 1,000 Archives is 1,000 requests and the CPUs are shared.
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
    confirm = b"confirmation yes"

    class Nothing(asyncio.Protocol):
        def connection_made(self, transport):
            self.transport = transport
            self.buf = b""

        def data_received(self, data):
            self.buf += data
            while True:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    break
                line = self.buf[:self.buf.find(b"\r\n")]
                self.buf = self.buf[end + 4:]
                body = confirm if b"inclusionConfirmationRequest" in line else b""
                self.transport.write(head % len(body) + body)
            if len(self.buf) > 65536:
                self.transport.close()

    async def main():
        loop = asyncio.get_running_loop()
        servers = []
        for k in range(count):
            server = await loop.create_server(Nothing, "127.0.0.1", first + k if first else 0,
                                              backlog=1024, reuse_address=True)
            servers.append(server)
            print(server.sockets[0].getsockname()[1])
        print("ready", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


if __name__ == "__main__":
    kind, port = sys.argv[1], int(sys.argv[2])
    if kind == "silent":
        silent(port)
    elif kind == "slow":
        slow(port, float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)
    elif kind == "many":
        many(port, int(sys.argv[3]))
    else:
        sys.exit(f"peer.py: unknown kind {kind}")
