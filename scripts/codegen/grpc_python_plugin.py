"""A protoc plugin that runs grpcio-tools' bundled gRPC Python generator.

buf does not know `protoc_builtin: grpc_python`, and grpcio-tools ships no
standalone plugin binary, so this script speaks the plugin protocol itself:
it reads the CodeGeneratorRequest on stdin, writes the request's descriptors
to a temporary FileDescriptorSet, runs grpc_tools.protoc on it with
--grpc_python_out, and answers a CodeGeneratorResponse with the files that
came out. The plugin parameter (buf's `opt`) is passed on as the generator's
options.
"""

import os
import sys
import tempfile

from google.protobuf import descriptor_pb2
from google.protobuf.compiler import plugin_pb2
from grpc_tools import protoc


def main() -> int:
    request = plugin_pb2.CodeGeneratorRequest.FromString(sys.stdin.buffer.read())
    response = plugin_pb2.CodeGeneratorResponse()
    response.supported_features = (
        plugin_pb2.CodeGeneratorResponse.FEATURE_PROTO3_OPTIONAL
    )

    with tempfile.TemporaryDirectory(prefix="grpc-python-plugin-") as tmp:
        fds = descriptor_pb2.FileDescriptorSet()
        fds.file.extend(request.proto_file)
        fds_path = os.path.join(tmp, "request.binpb")
        with open(fds_path, "wb") as f:
            f.write(fds.SerializeToString())
        out_dir = os.path.join(tmp, "out")
        os.mkdir(out_dir)
        out = out_dir if not request.parameter else f"{request.parameter}:{out_dir}"
        code = protoc.main(
            [
                "protoc",
                f"--descriptor_set_in={fds_path}",
                f"--grpc_python_out={out}",
                *request.file_to_generate,
            ]
        )
        if code != 0:
            response.error = f"grpc_tools.protoc exited with {code}"
        else:
            paths = sorted(
                os.path.join(dirpath, filename)
                for dirpath, _, filenames in os.walk(out_dir)
                for filename in filenames
            )
            for full in paths:
                generated = response.file.add()
                generated.name = os.path.relpath(full, out_dir).replace(os.sep, "/")
                with open(full, encoding="utf-8") as f:
                    generated.content = f.read()

    sys.stdout.buffer.write(response.SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main())
