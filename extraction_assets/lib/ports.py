"""A free TCP port on 127.0.0.1, for a server this process starts (the local model, the UI's tests, the benches)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port the kernel has just handed out and released: free unless another process takes it meanwhile."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
