// Parsing and printing of unit quantities; see units.h.
#include "core/units.h"

#include <array>    // unit tables
#include <cctype>   // isdigit, isspace
#include <cerrno>   // ERANGE from strtold
#include <cmath>    // llround, isfinite
#include <cstdio>   // snprintf
#include <cstdlib>  // strtold
#include <string>   // the number's digits
#include <utility>  // pair

namespace fabsim {
namespace {

struct Unit {
  std::string_view name;
  long double scale;  // base units per one of this unit
};

// Splits "1.5 ms" into the number and the unit suffix. Returns false on a malformed number.
bool split_number(std::string_view text, long double& number, std::string_view& unit) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const size_t start = i;
  bool digits = false;
  bool dot = false;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
    ++i;
  }
  if (!digits) return false;
  // Thousands of digits overflow long double: that is a malformed number here, not a crash.
  errno = 0;
  const std::string digits_text(text.substr(start, i - start));
  number = std::strtold(digits_text.c_str(), nullptr);
  if (errno == ERANGE || !std::isfinite(number)) return false;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t end = text.size();
  while (end > i && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  unit = text.substr(i, end - i);
  return true;
}

template <size_t N>
bool parse_with(std::string_view text, const std::array<Unit, N>& units, bool unit_optional,
                long double& out) {
  long double number = 0;
  std::string_view unit;
  if (!text.empty() && text.front() == '-') return false;
  if (!split_number(text, number, unit)) return false;
  if (unit.empty()) {
    if (!unit_optional && number != 0) return false;
    out = number;
    return true;
  }
  for (const auto& u : units) {
    if (u.name == unit) {
      out = number * u.scale;
      return true;
    }
  }
  return false;
}

constexpr std::array<Unit, 6> kTimeUnits{
    {{"ps", 1.0L}, {"ns", 1e3L}, {"us", 1e6L}, {"ms", 1e9L}, {"s", 1e12L}, {"µs", 1e6L}}};
constexpr std::array<Unit, 9> kByteUnits{{{"B", 1.0L},
                                          {"KB", 1e3L},
                                          {"MB", 1e6L},
                                          {"GB", 1e9L},
                                          {"KiB", 1024.0L},
                                          {"MiB", 1048576.0L},
                                          {"GiB", 1073741824.0L},
                                          {"kB", 1e3L},
                                          {"TB", 1e12L}}};
constexpr std::array<Unit, 5> kRateUnits{
    {{"bps", 1.0L}, {"Kbps", 1e3L}, {"Mbps", 1e6L}, {"Gbps", 1e9L}, {"Tbps", 1e12L}}};

bool is_whole(long double v) {
  return std::fabs(v - std::round(v)) < 1e-6L;
}

}  // namespace

Parsed<Time> parse_time(std::string_view text) {
  long double v = 0;
  if (!parse_with(text, kTimeUnits, false, v)) {
    return {{}, "a non-negative duration with a unit (ps, ns, us, ms, s), e.g. \"2us\""};
  }
  if (!is_whole(v) || v > 9.2e18L) {
    return {{}, "a duration that is a whole number of picoseconds, at most 9.2e18 ps (106 days)"};
  }
  return {Time::ps(static_cast<int64_t>(std::llround(v))), {}};
}

Parsed<Bytes> parse_bytes(std::string_view text) {
  long double v = 0;
  if (!parse_with(text, kByteUnits, true, v)) {
    return {{}, "a non-negative size with a unit (B, KB, KiB, MB, MiB, GB, GiB), e.g. \"16KiB\""};
  }
  if (!is_whole(v) || v > 9.2e18L) {
    return {{}, "a size that is a whole number of bytes, at most 9.2e18 B"};
  }
  return {Bytes(static_cast<int64_t>(std::llround(v))), {}};
}

Parsed<Rate> parse_rate(std::string_view text) {
  long double v = 0;
  // Below half a bit per second the rate rounds to 0 (a division by zero at the first packet).
  if (!parse_with(text, kRateUnits, false, v) || v < 0.5L) {
    return {{}, "a positive rate with a unit (bps, Kbps, Mbps, Gbps, Tbps), e.g. \"400Gbps\""};
  }
  if (!is_whole(v) || v > 9.2e18L) {
    return {{}, "a rate that is a whole number of bits per second, at most 9.2 Ebps"};
  }
  return {Rate(static_cast<int64_t>(std::llround(v))), {}};
}

namespace {
std::string with_unit(long double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6Lg%s", v, unit);
  return buf;
}
}  // namespace

std::string to_string(Time t) {
  const auto v = static_cast<long double>(t.ps());
  if (t.ps() == 0) return "0s";
  if (t.ps() % 1'000'000'000'000LL == 0) return with_unit(v / 1e12L, "s");
  if (t.ps() >= 1'000'000'000'000'000LL) {
    // 1,000 s and more: seconds with their fraction, never an exponent (the horizon, 26.7
    // days, printed as "2.30584e+09ms").
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6Lf", v / 1e12L);
    std::string out = buf;
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
    return out + "s";
  }
  if (t.ps() >= 1'000'000'000LL) return with_unit(v / 1e9L, "ms");
  if (t.ps() >= 1'000'000LL) return with_unit(v / 1e6L, "us");
  if (t.ps() >= 1'000LL) return with_unit(v / 1e3L, "ns");
  return with_unit(v, "ps");
}

std::string to_string(Bytes b) {
  const int64_t v = b.count();
  if (v != 0 && v % (1LL << 30) == 0) return std::to_string(v >> 30) + "GiB";
  if (v != 0 && v % (1LL << 20) == 0) return std::to_string(v >> 20) + "MiB";
  if (v != 0 && v % 1024 == 0) return std::to_string(v >> 10) + "KiB";
  if (v != 0 && v % 1'000'000 == 0) return std::to_string(v / 1'000'000) + "MB";
  if (v != 0 && v % 1000 == 0) return std::to_string(v / 1000) + "KB";
  return std::to_string(v) + "B";
}

std::string to_string(Rate r) {
  const auto v = static_cast<long double>(r.bps());
  if (r.bps() >= 1'000'000'000LL) return with_unit(v / 1e9L, "Gbps");
  if (r.bps() >= 1'000'000LL) return with_unit(v / 1e6L, "Mbps");
  return with_unit(v, "bps");
}

}  // namespace fabsim
