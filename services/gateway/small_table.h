#ifndef GPUADVISOR_SERVICES_GATEWAY_SMALL_TABLE_H_
#define GPUADVISOR_SERVICES_GATEWAY_SMALL_TABLE_H_

// A table keyed by integers >= 0 (offer indexes, packed ids) for one
// request's per-candidate lookups: sized once for at most `keys` keys, at
// most half full, linear probing, Fibonacci hashing. A lookup is a multiply
// and a compare or two, without a general hash map's hashing and growth,
// and without a mark per catalog offer to clear.
//
// Adding more than `keys` keys is undefined (the table never grows); find
// adds none. `Key`
// is a signed integer type; a narrower one keeps the table small (a table
// past 14 KB is a large allocation for jemalloc, several times the cost of a
// small one). Not thread-safe; meant to live for one stage of one request.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuadvisor::gateway {

template <typename Value, typename Key = int64_t>
class SmallTable {
 public:
  explicit SmallTable(size_t keys) {
    size_t size = 16;
    shift_ = 60;
    while (size < 2 * keys) {
      size *= 2;
      --shift_;
    }
    slots_.assign(size, Slot{-1, Value{}});
  }

  // The key's value, added as Value{} when absent. `key` >= 0.
  Value& operator[](Key key) {
    Slot& slot = SlotOf(key);
    slot.key = key;
    return slot.value;
  }
  // The key's value, or null when absent (nothing is added).
  Value* find(Key key) {
    Slot& slot = SlotOf(key);
    return slot.key == key ? &slot.value : nullptr;
  }

 private:
  struct Slot {
    Key key;  // -1: empty
    Value value;
  };
  // The key's slot, else the empty slot where it would go.
  Slot& SlotOf(Key key) {
    const size_t mask = slots_.size() - 1;
    for (size_t at = (static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift_;;
         at = (at + 1) & mask) {
      Slot& slot = slots_[at];
      if (slot.key == key || slot.key < 0) return slot;
    }
  }
  int shift_;  // 64 - log2(slots_.size())
  std::vector<Slot> slots_;
};

}  // namespace gpuadvisor::gateway

#endif  // GPUADVISOR_SERVICES_GATEWAY_SMALL_TABLE_H_
