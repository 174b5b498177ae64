// Flow-size CDFs; see size_cdf.h.
#include "workload/cdf/size_cdf.h"

#include <fmt/format.h>  // messages

#include <algorithm>     // partition_point
#include <charconv>      // from_chars
#include <cmath>         // isfinite, floor
#include <system_error>  // errc

namespace fabsim {
namespace {

// `text` split at spaces and tabs.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\r') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

template <typename T> bool number(std::string_view w, T& v) {
  const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  return ec == std::errc() && end == w.data() + w.size();
}

// A size in whole bytes: an integer, or a real number with no fraction ("1e3", "1000.0": a file
// that HPCC's generator reads with float()).
bool whole_bytes(std::string_view w, int64_t& v) {
  if (number(w, v)) return true;
  double d = 0;
  if (!number(w, d) || !std::isfinite(d) || d < 0 || d >= 9.2e18 || std::floor(d) != d) {
    return false;
  }
  v = static_cast<int64_t>(d);
  return true;
}

}  // namespace

std::optional<SizeCdf> SizeCdf::parse(std::string_view text, std::string* error) {
  SizeCdf cdf;
  int line_no = 0;
  int last_line = 0;
  auto fail = [error](int line, const std::string& what) {
    *error = fmt::format("line {}: expected {}", line, what);
    return std::nullopt;
  };
  size_t pos = 0;
  if (text.starts_with("\xEF\xBB\xBF")) pos = 3;  // a UTF-8 byte order mark
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    const auto w = words(line);
    if (w.empty()) continue;
    Point p;
    if (w.size() != 2) {
      return fail(line_no, fmt::format("two numbers `size_bytes cdf_percent`, got \"{}\"", line));
    }
    if (!whole_bytes(w[0], p.bytes) || p.bytes < 0) {
      return fail(line_no, fmt::format("a size in whole bytes (0 to 9.2e18), got \"{}\"", w[0]));
    }
    if (!number(w[1], p.percent) || !(p.percent >= 0 && p.percent <= 100)) {
      return fail(line_no, fmt::format("a cumulative percent in [0, 100], got \"{}\"", w[1]));
    }
    if (cdf.points_.empty() && p.percent != 0) {
      return fail(line_no, fmt::format("the first point at percent 0, got {}", w[1]));
    }
    if (!cdf.points_.empty()) {
      const Point& prev = cdf.points_.back();
      if (p.bytes <= prev.bytes) {
        return fail(line_no, fmt::format("a size above the previous {} (sizes increase strictly), "
                                         "got {}",
                                         prev.bytes, p.bytes));
      }
      if (p.percent <= prev.percent) {
        return fail(line_no, fmt::format("a percent above the previous {} (percents increase "
                                         "strictly), got {}",
                                         prev.percent, w[1]));
      }
    }
    cdf.points_.push_back(p);
    last_line = line_no;
  }
  if (cdf.points_.empty()) {
    *error = "expected at least two points (percent 0 to percent 100), found none";
    return std::nullopt;
  }
  if (cdf.points_.size() < 2) {
    return fail(last_line, fmt::format("at least two points (percent 0 to percent 100), got {}",
                                       cdf.points_.size()));
  }
  if (cdf.points_.back().percent != 100) {
    return fail(last_line,
                fmt::format("the last point at percent 100, got {}", cdf.points_.back().percent));
  }
  return cdf;
}

int64_t SizeCdf::at_percent(double y, CdfInterpolation how) const {
  // The first point whose percent is at least y (the first point's is 0, the last's 100).
  const auto it = std::partition_point(points_.begin(), points_.end(),
                                       [y](const Point& p) { return p.percent < y; });
  int64_t size = 0;
  if (it == points_.end()) {
    size = points_.back().bytes;
  } else if (it == points_.begin() || how == CdfInterpolation::kStep || it->percent == y) {
    size = it->bytes;
  } else {
    const Point& a = *(it - 1);
    const Point& b = *it;
    const double x = static_cast<double>(a.bytes) + static_cast<double>(b.bytes - a.bytes) *
                                                        (y - a.percent) / (b.percent - a.percent);
    size = std::min(static_cast<int64_t>(x), b.bytes);  // truncated, as HPCC's int(size)
  }
  return size > 0 ? size : 1;
}

double SizeCdf::mean(CdfInterpolation how) const {
  double sum = 0;
  for (size_t i = 1; i < points_.size(); ++i) {
    const auto a = static_cast<double>(points_[i - 1].bytes);
    const auto b = static_cast<double>(points_[i].bytes);
    const double w = (points_[i].percent - points_[i - 1].percent) / 100.0;
    sum += how == CdfInterpolation::kLinear ? (a + b) / 2 * w : b * w;
  }
  return sum;
}

double SizeCdf::second_moment(CdfInterpolation how) const {
  double sum = 0;
  for (size_t i = 1; i < points_.size(); ++i) {
    const auto a = static_cast<double>(points_[i - 1].bytes);
    const auto b = static_cast<double>(points_[i].bytes);
    const double w = (points_[i].percent - points_[i - 1].percent) / 100.0;
    // A segment is uniform on [a, b] under linear interpolation: E[x^2] = (a^2 + ab + b^2) / 3.
    sum += how == CdfInterpolation::kLinear ? (a * a + a * b + b * b) / 3 * w : b * b * w;
  }
  return sum;
}

}  // namespace fabsim
