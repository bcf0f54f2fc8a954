#include "services/catalog/import/offer_shape.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace gpuadvisor::catalog {
namespace {

using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;
using ::google::protobuf::Reflection;
using ::gpuadvisor::catalog::v1::Offer;

// Every Offer field, decided once (offer_shape.h says why): the machine is
// copied, the rest belongs to one price, region, term or sighting.
const std::set<std::string> kMachine = {"provider",
                                        "instance_type",
                                        "gpu_model",
                                        "gpus_per_node",
                                        "nodes",
                                        "vcpus",
                                        "ram_bytes",
                                        "local_disk_bytes",
                                        "link",
                                        "link_bytes_per_second",
                                        "fabric",
                                        "fabric_gbps",
                                        "max_nodes",
                                        "scale_up",
                                        "scale_out",
                                        "host_link",
                                        "network",
                                        "host_tier",
                                        "stale_after_seconds"};
const std::set<std::string> kPriceRegionOrTerm = {"id",
                                                  "region",
                                                  "availability",
                                                  "on_demand_usd_per_hour",
                                                  "spot_usd_per_hour",
                                                  "reserved_usd_per_hour",
                                                  "source",
                                                  "spot_min_usd_per_hour",
                                                  "spot_max_usd_per_hour",
                                                  "spot_zones",
                                                  "warnings",
                                                  "as_of",
                                                  "host_reliability",
                                                  "price_flags",
                                                  "price_source",
                                                  "priced_at_unix_seconds",
                                                  "last_seen_available_unix_seconds",
                                                  "commitments",
                                                  "spot_as_of",
                                                  "spot_price_source",
                                                  "spot_priced_at_unix_seconds"};

// Sets every field of `m` (and of its messages, `depth` levels down) to a
// value that is not the default.
void FillEveryField(Message& m, int depth) {
  const Reflection& r = *m.GetReflection();
  for (int i = 0; i < m.GetDescriptor()->field_count(); ++i) {
    const FieldDescriptor& f = *m.GetDescriptor()->field(i);
    if (f.is_repeated()) {
      if (f.cpp_type() == FieldDescriptor::CPPTYPE_STRING) r.AddString(&m, &f, "warned");
      if (f.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && depth > 0) {
        FillEveryField(*r.AddMessage(&m, &f), depth - 1);
      }
      continue;
    }
    switch (f.cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        r.SetString(&m, &f, "x-" + f.name());
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        r.SetInt32(&m, &f, 7);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        r.SetInt64(&m, &f, 7'000'000'000);
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        r.SetDouble(&m, &f, 7.25);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        r.SetBool(&m, &f, true);
        break;
      case FieldDescriptor::CPPTYPE_ENUM:
        r.SetEnumValue(&m, &f, f.enum_type()->value(f.enum_type()->value_count() - 1)->number());
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (depth > 0) FillEveryField(*r.MutableMessage(&m, &f), depth - 1);
        break;
      default:
        FAIL() << "field type of " << f.full_name() << " not handled by the test";
    }
  }
}

TEST(MachineShapeOf, CopiesTheMachineAndNothingOfThePrice) {
  Offer known;
  FillEveryField(known, 2);
  ASSERT_GT(known.commitments_size(), 0);
  ASSERT_GT(known.price_flags_size(), 0);
  ASSERT_GT(known.warnings_size(), 0);
  const Offer shape = MachineShapeOf(known);

  Offer expected = known;
  const Reflection& r = *expected.GetReflection();
  const auto& fields = *Offer::descriptor();
  ASSERT_GT(fields.field_count(), 0);
  for (int i = 0; i < fields.field_count(); ++i) {
    const FieldDescriptor& f = *fields.field(i);
    // A new Offer field must be decided here (and in offer_shape.h).
    EXPECT_NE(kMachine.contains(f.name()), kPriceRegionOrTerm.contains(f.name()))
        << "Offer." << f.name() << ": machine or price? decide in offer_shape.h";
    if (!kMachine.contains(f.name())) r.ClearField(&expected, &f);
  }
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(expected, shape))
      << "expected:\n"
      << expected.DebugString() << "got:\n"
      << shape.DebugString();
  EXPECT_EQ(shape.commitments_size(), 0);
  EXPECT_EQ(shape.price_flags_size(), 0);
  EXPECT_EQ(shape.warnings_size(), 0);
  EXPECT_FALSE(shape.has_host_reliability());
  EXPECT_EQ(shape.as_of(), "");
  EXPECT_EQ(shape.priced_at_unix_seconds(), 0);
}

}  // namespace
}  // namespace gpuadvisor::catalog
