// A FIFO ring buffer with power-of-two capacity that allocates nothing until the first push.
// Used for per-class port queues, link in-flight lists and per-connection windows, of which a
// large fabric has tens of thousands (a std::deque allocates about 600 B on construction).
// Growing moves the elements: references into the ring do not survive a push_back.
#pragma once

#include <cstddef>  // size_t
#include <cstdint>  // uint32_t
#include <memory>   // unique_ptr storage
#include <utility>  // move, swap

#include "core/assert.h"

namespace fabsim {

template <typename T> class Ring {
 public:
  bool empty() const { return count_ == 0; }
  /// Slots allocated (0 before the first push, then a power of two).
  size_t capacity() const { return cap_; }
  size_t size() const { return count_; }
  T& front() {
    FABSIM_ASSERT(count_ > 0);
    return buf_[head_];
  }
  const T& front() const {
    FABSIM_ASSERT(count_ > 0);
    return buf_[head_];
  }
  /// Element i positions behind the front.
  T& operator[](size_t i) { return buf_[(head_ + i) & (cap_ - 1U)]; }
  const T& operator[](size_t i) const { return buf_[(head_ + i) & (cap_ - 1U)]; }
  void push_back(const T& v) {
    if (count_ == cap_) grow();
    buf_[(head_ + count_) & (cap_ - 1)] = v;
    ++count_;
  }
  void pop_front() {
    FABSIM_ASSERT(count_ > 0);
    head_ = (head_ + 1) & (cap_ - 1);
    --count_;
  }
  T& back() {
    FABSIM_ASSERT(count_ > 0);
    return buf_[(head_ + count_ - 1) & (cap_ - 1)];
  }
  const T& back() const {
    FABSIM_ASSERT(count_ > 0);
    return buf_[(head_ + count_ - 1) & (cap_ - 1)];
  }
  /// Where the next push_back() writes, if it will not grow the ring (else null): a prefetch
  /// hint only (a pop_front() leaves it where it is; a grow() makes it stale).
  const T* next_slot() const {
    return count_ < cap_ ? &buf_[(head_ + count_) & (cap_ - 1)] : nullptr;
  }
  void pop_back() {
    FABSIM_ASSERT(count_ > 0);
    --count_;
  }
  /// Inserts `v` before element i (i = size() appends), moving the elements behind it back.
  void insert(size_t i, const T& v) {
    FABSIM_ASSERT(i <= count_);
    push_back(v);
    for (size_t k = count_ - 1; k > i; --k) std::swap((*this)[k], (*this)[k - 1]);
  }
  void clear() {
    head_ = 0;
    count_ = 0;
  }

 private:
  void grow() {
    FABSIM_ASSERT(cap_ <= UINT32_MAX / 2);
    // Two slots first: most per-connection rings (messages, resends) hold one or two entries,
    // and a 128-host all-to-all has 16,256 connections; busy rings double up to their size.
    const uint32_t cap = cap_ == 0 ? 2 : cap_ * 2;
    auto next = std::make_unique<T[]>(cap);
    for (uint32_t i = 0; i < count_; ++i) next[i] = std::move(buf_[(head_ + i) & (cap_ - 1)]);
    buf_ = std::move(next);
    cap_ = cap;
    head_ = 0;
  }
  // 32-bit positions keep the ring at 24 bytes: a large fabric holds tens of thousands.
  std::unique_ptr<T[]> buf_;
  uint32_t cap_ = 0;
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace fabsim
