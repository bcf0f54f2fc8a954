#include "common/io/deterministic.h"

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace gpuadvisor {

void AppendDeterministicBytes(const google::protobuf::MessageLite& message, std::string* out) {
  google::protobuf::io::StringOutputStream stream(out);  // appends
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
}

}  // namespace gpuadvisor
