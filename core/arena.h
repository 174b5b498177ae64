// Storage for the long-lived objects of a fabric that are laid out by cache line (links and
// egress ports, docs/PERFORMANCE.md "Cache lines per event"). Such an object from the heap
// costs its 64-byte alignment: a chunk header and up to a line of slack each, about 50 bytes
// on a 256- or 384-byte object, and a large fabric has tens of thousands. The arena carves them
// from 64 KiB blocks instead, back to back on line boundaries, and never frees them one by one:
// an ArenaPtr runs the destructor and the memory goes back when the arena (the simulation)
// is destroyed, after the network that holds the pointers.
#pragma once

#include <cstddef>  // size_t, byte
#include <memory>   // unique_ptr
#include <new>      // align_val_t
#include <utility>  // forward
#include <vector>   // blocks

namespace fabsim {

/// Runs the destructor only: the arena owns the memory.
template <typename T> struct ArenaDelete {
  void operator()(T* p) const { p->~T(); }
};
template <typename T> using ArenaPtr = std::unique_ptr<T, ArenaDelete<T>>;

class LineArena {
 public:
  static constexpr size_t kLine = 64;
  static constexpr size_t kBlock = 64 * 1024;

  LineArena() = default;
  LineArena(const LineArena&) = delete;
  LineArena& operator=(const LineArena&) = delete;

  /// `bytes` of storage aligned to a cache line (bytes rounded up to whole lines).
  void* allocate(size_t bytes) {
    bytes = (bytes + kLine - 1) / kLine * kLine;
    if (bytes > left_) {
      const size_t size = bytes > kBlock ? bytes : kBlock;
      blocks_.emplace_back(static_cast<std::byte*>(::operator new (size, std::align_val_t{kLine})));
      next_ = blocks_.back().get();
      left_ = size;
    }
    void* p = next_;
    next_ += bytes;
    left_ -= bytes;
    return p;
  }
  /// A T constructed in the arena; T's alignment must not exceed a line.
  template <typename T, typename... Args> ArenaPtr<T> make(Args&&... args) {
    static_assert(alignof(T) <= kLine);
    return ArenaPtr<T>(new (allocate(sizeof(T))) T(std::forward<Args>(args)...));
  }
  /// Blocks allocated so far.
  size_t blocks() const { return blocks_.size(); }

 private:
  struct Free {
    void operator()(std::byte* p) const { ::operator delete (p, std::align_val_t{kLine}); }
  };
  std::vector<std::unique_ptr<std::byte, Free>> blocks_;
  std::byte* next_ = nullptr;
  size_t left_ = 0;
};

}  // namespace fabsim
