#include "common/io/deterministic.h"

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace gpuadvisor {

void AppendDeterministicBytes(const google::protobuf::MessageLite& message, std::string* out) {
  // Sized once, written in place: a growing string would copy and zero-fill
  // a 50 MB catalog snapshot several times over.
  const size_t size = message.ByteSizeLong();
  const size_t start = out->size();
  out->resize(start + size);
  google::protobuf::io::ArrayOutputStream stream(out->data() + start, static_cast<int>(size));
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeWithCachedSizes(&coded);
}

}  // namespace gpuadvisor
