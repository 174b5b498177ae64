// Traffic patterns; see traffic.h.
#include "workload/traffic.h"

#include <numeric>  // iota
#include <utility>  // swap

namespace fabsim {

std::vector<uint32_t> derangement(int hosts, Rng& rng) {
  std::vector<uint32_t> dst(hosts);
  if (hosts < 2) return {};
  // Fisher-Yates shuffles until no host maps to itself (expected e tries).
  for (;;) {
    std::iota(dst.begin(), dst.end(), 0U);
    for (int i = hosts - 1; i > 0; --i) {
      std::swap(dst[i], dst[rng.below(static_cast<uint64_t>(i) + 1)]);
    }
    bool fixed = false;
    for (int i = 0; i < hosts; ++i) fixed = fixed || dst[i] == static_cast<uint32_t>(i);
    if (!fixed) break;
  }
  return dst;
}

std::vector<FlowSpec> permutation_flows(int hosts, int64_t bytes, Time start, Rng& rng) {
  const std::vector<uint32_t> dst = derangement(hosts, rng);
  std::vector<FlowSpec> out;
  out.reserve(dst.size());
  for (size_t i = 0; i < dst.size(); ++i) {
    FlowSpec f;
    f.src = static_cast<uint32_t>(i);
    f.dst = dst[i];
    f.bytes = bytes;
    f.start = start;
    out.push_back(f);
  }
  return out;
}

std::vector<FlowSpec> incast_flows(int hosts, int senders, uint32_t receiver, int64_t bytes,
                                   Time start) {
  std::vector<FlowSpec> out;
  for (int h = 0; h < hosts && static_cast<int>(out.size()) < senders; ++h) {
    if (static_cast<uint32_t>(h) == receiver) continue;
    FlowSpec f;
    f.src = static_cast<uint32_t>(h);
    f.dst = receiver;
    f.bytes = bytes;
    f.start = start;
    out.push_back(f);
  }
  return out;
}

}  // namespace fabsim
