// Values addressed by a small slot number, freed slots reused: what an event target keeps for
// its pending events (the event's tag names the slot) or an owner for its cookies. take()
// frees the slot before the caller acts on the value, so the caller may put() again at once.
#pragma once

#include <cstdint>  // slot numbers
#include <vector>   // values, free list

#include "core/assert.h"

namespace fabsim {

template <typename T> class Slots {
 public:
  /// Stores `v` in a free slot (a freed one first) and returns its number.
  uint32_t put(const T& v) {
    if (!free_.empty()) {
      const uint32_t slot = free_.back();
      free_.pop_back();
      items_[slot] = v;
      return slot;
    }
    items_.push_back(v);
    return static_cast<uint32_t>(items_.size() - 1);
  }
  /// The value in `slot`, which becomes free.
  T take(uint32_t slot) {
    FABSIM_ASSERT(slot < items_.size());
    T v = items_[slot];
    free_.push_back(slot);
    return v;
  }

 private:
  std::vector<T> items_;
  std::vector<uint32_t> free_;
};

}  // namespace fabsim
