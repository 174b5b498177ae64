// Strong unit types: Time (int64 picoseconds), Bytes (int64), Rate (int64 bits per second).
// DESIGN.md "The engine": time is exact integer picoseconds; serialization delay is computed
// with a 128-bit intermediate and rounded to the nearest picosecond, never per byte.
#pragma once

#include <compare>  // operator<=>
#include <cstdint>  // int64_t
#include <string>   // error messages of the parsers
#include <string_view>

namespace fabsim {

// 128-bit intermediates for exact rate arithmetic (GCC/Clang extension, marked so -Wpedantic
// accepts it).
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

/// Simulated time in picoseconds; about 106 days of range.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ps(int64_t v) { return Time(v); }
  static constexpr Time ns(int64_t v) { return Time(v * 1000); }
  static constexpr Time us(int64_t v) { return Time(v * 1000 * 1000); }
  static constexpr Time ms(int64_t v) { return Time(v * 1000 * 1000 * 1000); }
  static constexpr Time max() { return Time(INT64_MAX); }
  constexpr int64_t ps() const { return v_; }
  constexpr double us_f() const { return static_cast<double>(v_) * 1e-6; }
  constexpr double sec_f() const { return static_cast<double>(v_) * 1e-12; }
  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(v_ + o.v_); }
  constexpr Time operator-(Time o) const { return Time(v_ - o.v_); }
  constexpr Time& operator+=(Time o) {
    v_ += o.v_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    v_ -= o.v_;
    return *this;
  }
  constexpr Time operator*(int64_t k) const { return Time(v_ * k); }
  constexpr Time operator/(int64_t k) const { return Time(v_ / k); }

 private:
  constexpr explicit Time(int64_t v) : v_(v) {}
  int64_t v_ = 0;
};

/// A byte count (payload, frame, buffer size).
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(int64_t v) : v_(v) {}
  constexpr int64_t count() const { return v_; }
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes(v_ + o.v_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(v_ - o.v_); }
  constexpr Bytes& operator+=(Bytes o) {
    v_ += o.v_;
    return *this;
  }
  constexpr Bytes operator*(int64_t k) const { return Bytes(v_ * k); }

 private:
  int64_t v_ = 0;
};

/// A link or sending rate in bits per second.
class Rate {
 public:
  constexpr Rate() = default;
  constexpr explicit Rate(int64_t bps) : bps_(bps) {}
  static constexpr Rate gbps(int64_t g) { return Rate(g * 1000 * 1000 * 1000); }
  static constexpr Rate mbps(int64_t m) { return Rate(m * 1000 * 1000); }
  constexpr int64_t bps() const { return bps_; }
  constexpr double gbps_f() const { return static_cast<double>(bps_) * 1e-9; }
  constexpr auto operator<=>(const Rate&) const = default;

 private:
  int64_t bps_ = 0;
};

/// Time to put `bytes` on a wire of rate `rate`, rounded to the nearest picosecond.
/// Exact: 4096 B at 400 Gbps = 81,920 ps.
constexpr Time serialization_delay(int64_t bytes, Rate rate) {
  // A frame (under 1 MiB) at a rate up to 2^62 b/s fits unsigned 64-bit arithmetic: bytes x 8e12
  // < 8.4e18, plus half the rate < 1.1e19 < 2^64. The same quotient as the 128-bit form below,
  // with a hardware divide instead of the library's 128-bit one (2.3 % of a RoCE run's time
  // went to __divti3: links time every frame, rate-based CCs pace every packet).
  constexpr int64_t kFastBytes = int64_t{1} << 20;
  if (bytes >= 0 && bytes < kFastBytes && rate.bps() > 0 && rate.bps() <= (int64_t{1} << 62)) {
    const uint64_t num = static_cast<uint64_t>(bytes) * 8'000'000'000'000ULL;
    const auto den = static_cast<uint64_t>(rate.bps());
    return Time::ps(static_cast<int64_t>((num + den / 2) / den));
  }
  const Int128 num = static_cast<Int128>(bytes) * 8 * 1'000'000'000'000LL;
  const Int128 den = rate.bps();
  return Time::ps(static_cast<int64_t>((num + den / 2) / den));
}

/// `value` x `rate` / `reference`, truncated toward zero (`reference` > 0): a threshold given at
/// a reference rate, on a port of another rate (RED's Kmin/Kmax, the trim threshold). In 64 bits
/// when the product fits (every real threshold), else in 128; the same quotient either way.
constexpr int64_t scale_by_rate(int64_t value, Rate rate, Rate reference) {
  int64_t product = 0;
  if (!__builtin_mul_overflow(value, rate.bps(), &product)) return product / reference.bps();
  return static_cast<int64_t>(static_cast<Int128>(value) * rate.bps() / reference.bps());
}

/// Bytes that `rate` carries in `t`, rounded down.
constexpr int64_t bytes_in(Time t, Rate rate) {
  const Int128 num = static_cast<Int128>(t.ps()) * rate.bps();
  return static_cast<int64_t>(num / (static_cast<Int128>(8) * 1'000'000'000'000LL));
}

namespace literals {
constexpr Time operator""_ps(unsigned long long v) {
  return Time::ps(static_cast<int64_t>(v));
}
constexpr Time operator""_ns(unsigned long long v) {
  return Time::ns(static_cast<int64_t>(v));
}
constexpr Time operator""_us(unsigned long long v) {
  return Time::us(static_cast<int64_t>(v));
}
constexpr Time operator""_ms(unsigned long long v) {
  return Time::ms(static_cast<int64_t>(v));
}
constexpr Bytes operator""_B(unsigned long long v) {
  return Bytes(static_cast<int64_t>(v));
}
constexpr Bytes operator""_KB(unsigned long long v) {
  return Bytes(static_cast<int64_t>(v) * 1000);
}
constexpr Bytes operator""_KiB(unsigned long long v) {
  return Bytes(static_cast<int64_t>(v) * 1024);
}
constexpr Bytes operator""_MB(unsigned long long v) {
  return Bytes(static_cast<int64_t>(v) * 1000000);
}
constexpr Bytes operator""_MiB(unsigned long long v) {
  return Bytes(static_cast<int64_t>(v) << 20);
}
constexpr Rate operator""_Gbps(unsigned long long v) {
  return Rate::gbps(static_cast<int64_t>(v));
}
constexpr Rate operator""_Mbps(unsigned long long v) {
  return Rate::mbps(static_cast<int64_t>(v));
}
}  // namespace literals

/// Result of parsing a quantity: the value, or a message saying what was expected.
template <typename T> struct Parsed {
  T value{};
  std::string error;  // empty on success
  bool ok() const { return error.empty(); }
};

/// "2us", "1.5 ms", "800ns", "100ps", "0" -> Time. Fractions must resolve to whole picoseconds.
Parsed<Time> parse_time(std::string_view text);
/// "16KiB", "16KB" (1000), "4096", "4096B", "1.5MB", "2MiB", "1GiB" -> Bytes.
Parsed<Bytes> parse_bytes(std::string_view text);
/// "400Gbps", "100 Gbps", "2.5Gbps", "800Mbps", "1Tbps", "1000bps" -> Rate. Must be > 0.
Parsed<Rate> parse_rate(std::string_view text);

/// Human-readable forms used in tables and `fabsim list` ("2us", "16KiB", "400Gbps").
std::string to_string(Time t);
std::string to_string(Bytes b);
std::string to_string(Rate r);

}  // namespace fabsim
