"""Python client for filetoolsd: safe file tools for AI agents over gRPC.

``Client`` (blocking) and ``AsyncClient`` (asyncio) have the same methods;
failures raise ``FileToolsError`` subclasses from ``filetools.errors``. The
messages the methods take and return are the generated ones in
``filetools.v1`` (regenerate with ``npm run generate`` at the repository
root; never edit them by hand).
"""

from filetools.aio import AsyncClient, AsyncStream
from filetools.client import Client, Stream
from filetools import errors
from filetools.errors import *  # noqa: F403 (every exception class is part of the API)
from filetools.models import MediaImage, MediaRead, PdfPage, SavedFile, TextWindow
from filetools.v1.files_pb2 import TextEdit
# The release, stamped from the repository's package.json by `npm run generate`.
from filetools._version import __version__

__all__ = [
    "AsyncClient",
    "AsyncStream",
    "Client",
    "MediaImage",
    "MediaRead",
    "PdfPage",
    "SavedFile",
    "Stream",
    "TextEdit",
    "TextWindow",
]
__all__ += errors.__all__
