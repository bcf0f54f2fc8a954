#ifndef GPUADVISOR_TESTS_TESTING_WATCH_MESSAGES_H_
#define GPUADVISOR_TESTS_TESTING_WATCH_MESSAGES_H_

// The messages of a watch encoding (WatchHub::Encoded: whole or chunks) as a
// follower reads them, for tests of WatchCatalog and WatchPrices.

#include <vector>

#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "gtest/gtest.h"

namespace gpuadvisor::testing {

template <typename Response>
std::vector<Response> DecodeMessages(const std::vector<grpc::ByteBuffer>& buffers) {
  std::vector<Response> messages;
  for (const grpc::ByteBuffer& buffer : buffers) {
    grpc::ByteBuffer copy = buffer;  // shares the slices
    grpc::ProtoBufferReader reader(&copy);
    messages.emplace_back();
    EXPECT_TRUE(messages.back().ParseFromZeroCopyStream(&reader));
  }
  return messages;
}

}  // namespace gpuadvisor::testing

#endif  // GPUADVISOR_TESTS_TESTING_WATCH_MESSAGES_H_
