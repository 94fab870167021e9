"""Python client for filetoolsd.

The generated messages and gRPC stubs live in ``filetools.v1`` (``*_pb2``,
``*_pb2_grpc``; regenerate with ``npm run generate`` at the repository root,
never edit them by hand). The idiomatic ``Client`` / ``AsyncClient`` layer is
built on top of them.
"""

__version__ = "0.1.0"
