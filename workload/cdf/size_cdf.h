// A flow-size distribution given as points of its CDF (REFERENCE.md §9.1), read in HPCC's file
// format, and drawn from with either of the two conventions the papers' simulators use: HPCC's
// linear interpolation (the sizes between two points are uniform) or Homa's steps (each point is
// a discrete size). The same points have two different means (§9.1.1), so the mean is asked for
// by convention, and the offered load follows the one in use.
#pragma once

#include <cstdint>      // sizes
#include <optional>     // parse result
#include <string>       // messages
#include <string_view>  // file text
#include <vector>       // points

namespace fabsim {

/// How a size is read off the CDF (`workload.interpolation`).
enum class CdfInterpolation : uint8_t {
  kLinear,  // HPCC traffic_gen: invert the piecewise-linear CDF, truncate to whole bytes
  kStep,    // Homa: the first point whose cumulative fraction is at least u
};

class SizeCdf {
 public:
  struct Point {
    int64_t bytes = 0;
    double percent = 0;  // cumulative, 0..100
  };

  /// Parses HPCC's format: one `size_bytes cdf_percent` pair per line, `#` starts a comment,
  /// blank lines skipped. The first point has percent 0 and the last 100; sizes and percents
  /// increase strictly (HPCC's custom_rand.py refuses anything else). On error returns nothing
  /// and sets `error` to "line N: expected ..., got ..." (the caller adds the file's name).
  static std::optional<SizeCdf> parse(std::string_view text, std::string* error);

  const std::vector<Point>& points() const { return points_; }

  /// The size at cumulative percent `y` in [0, 100]. Linear: x0 + (x1 - x0)(y - y0)/(y1 - y0) in
  /// the first segment with y <= y1, truncated; step: the first point with percent >= y. A size
  /// of 0 becomes 1 byte (HPCC's generator does the same), so every flow carries data. At a
  /// point's percent both give that point's size exactly.
  int64_t at_percent(double y, CdfInterpolation how) const;
  /// A draw for u uniform in [0, 1): at_percent(100 u).
  int64_t sample(double u, CdfInterpolation how) const { return at_percent(u * 100.0, how); }

  /// Mean size in bytes. Linear: the trapezoid sum of (x_{i-1} + x_i)/2 (p_i - p_{i-1})/100
  /// (HPCC's getAvg); step: the right-end sum of x_i (p_i - p_{i-1})/100. The truncation to whole
  /// bytes is left out (it lowers a linear draw's mean by under half a byte).
  double mean(CdfInterpolation how) const;
  /// Second moment E[size^2] (for the sampling error of a mean, as the tests use it).
  double second_moment(CdfInterpolation how) const;

 private:
  std::vector<Point> points_;
};

}  // namespace fabsim
