// gRPC server reflection (v1 and v1alpha), so grpcurl and buf curl can call
// the daemon without .proto files. @grpc/reflection only reads
// `fileDescriptorProtos` from the package definition it is given, so it is fed
// the descriptors protobuf-es embeds in the generated code (with their imports).
// Descriptors from proto-loader would not do: strict clients reject them.
import { toBinary, type DescFile } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { Server } from "@grpc/grpc-js";
import { ReflectionService } from "@grpc/reflection";

/** Makes the services and messages of `files` (and of their imports) discoverable through reflection. */
export function addReflection(server: Server, files: readonly DescFile[]): void {
  const encoded = new Map<string, Buffer>();
  const add = (file: DescFile): void => {
    if (encoded.has(file.proto.name)) return;
    file.dependencies.forEach(add);
    const bytes = toBinary(FileDescriptorProtoSchema, file.proto);
    encoded.set(file.proto.name, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  };
  files.forEach(add);
  // A package definition with a single entry; its format and type are never read.
  new ReflectionService({
    descriptors: { format: "Protocol Buffer 3 DescriptorProto", type: {}, fileDescriptorProtos: [...encoded.values()] },
  }).addToServer(server);
}
