// Histogram percentiles; see stats.h.
#include "core/stats.h"

#include <cmath>  // ceil

#include "core/assert.h"

namespace fabsim {

void Histogram::sort() const {
  if (!sorted_) {
    std::sort(samples_.begin(), samples_.end());
    sorted_ = true;
  }
}

int64_t Histogram::percentile(double p) const {
  FABSIM_ASSERT(!samples_.empty());
  if (samples_.empty()) return 0;
  sort();
  const auto n = static_cast<double>(samples_.size());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * n));
  if (rank < 1) rank = 1;
  if (rank > samples_.size()) rank = samples_.size();
  return samples_[rank - 1];
}

double Histogram::mean() const {
  if (samples_.empty()) return 0;
  long double sum = 0;
  for (int64_t v : samples_) sum += static_cast<long double>(v);
  return static_cast<double>(sum / static_cast<long double>(samples_.size()));
}

}  // namespace fabsim
