// Statistics: a histogram that keeps every sample so percentiles are exact (nearest-rank),
// and a time-weighted level tracker. Models only count; reporting happens elsewhere.
#pragma once

#include <algorithm>  // sort
#include <cstdint>    // int64_t
#include <vector>     // samples

namespace fabsim {

/// Exact-percentile histogram of int64 samples (e.g. picoseconds).
class Histogram {
 public:
  void add(int64_t v) {
    samples_.push_back(v);
    sorted_ = false;
  }
  size_t count() const { return samples_.size(); }
  bool empty() const { return samples_.empty(); }
  /// Nearest-rank percentile, p in [0, 100]: the smallest sample with at least p% of samples
  /// at or below it. p = 0 gives the minimum, p = 100 the maximum. Requires a sample.
  int64_t percentile(double p) const;
  int64_t min() const { return percentile(0); }
  int64_t max() const { return percentile(100); }
  double mean() const;
  const std::vector<int64_t>& samples() const { return samples_; }

 private:
  void sort() const;
  mutable std::vector<int64_t> samples_;
  mutable bool sorted_ = true;
};

}  // namespace fabsim
