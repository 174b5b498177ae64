// Units: parsing, printing and exact serialization delay.
#include <gtest/gtest.h>

#include "core/units.h"

namespace fabsim {
namespace {
using namespace literals;

TEST(Units, SerializationDelayIsExact) {
  EXPECT_EQ(serialization_delay(4096, 400_Gbps).ps(), 81'920);
  EXPECT_EQ(serialization_delay(4096 + 62 + 20, 100_Gbps).ps(), 334'240);
  // 1 byte at 3 Gbps = 2666.67 ps: rounded to nearest, not truncated.
  EXPECT_EQ(serialization_delay(1, Rate(3'000'000'000)).ps(), 2'667);
  // Many bytes: no per-byte truncation error accumulates.
  EXPECT_EQ(serialization_delay(3'000'000'000LL, Rate(3'000'000'000)).ps(), 8'000'000'000'000LL);
}

// Frames under 1 MiB take a 64-bit path; it must give the 128-bit quotient to the picosecond,
// at its edges (the largest frame, the largest rate, rounding halves) and just past them.
TEST(Units, SerializationDelaysFastPathGivesThe128BitQuotient) {
  const auto reference = [](int64_t bytes, int64_t bps) {
    const Int128 num = static_cast<Int128>(bytes) * 8 * 1'000'000'000'000LL;
    return static_cast<int64_t>((num + bps / 2) / bps);
  };
  const int64_t sizes[] = {
      0, 1, 64, 1'000, 1'068, 4'150, 9'216, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 1LL << 30};
  const int64_t rates[] = {1,
                           3,
                           7,
                           1'000'000'000,
                           25'000'000'000,
                           99'999'999'999,
                           100'000'000'000,
                           400'000'000'000,
                           1'600'000'000'000,
                           (1LL << 62) - 1,
                           1LL << 62,
                           (1LL << 62) + 1,
                           INT64_MAX};
  for (const int64_t b : sizes) {
    for (const int64_t r : rates) {
      EXPECT_EQ(serialization_delay(b, Rate(r)).ps(), reference(b, r)) << b << " B at " << r;
    }
  }
  // A rounding half: 1 B at 16 Tb/s is 0.5 ps, rounded up.
  EXPECT_EQ(serialization_delay(1, Rate(16'000'000'000'000)).ps(), 1);
}

// Thresholds scale with a port's rate; the 64-bit product and the 128-bit one give the same
// truncated quotient, and a product past 64 bits is still exact.
TEST(Units, ScaleByRateIsExactInBothWidths) {
  EXPECT_EQ(scale_by_rate(400'000, 400_Gbps, 100_Gbps), 1'600'000);
  EXPECT_EQ(scale_by_rate(1'000, Rate(1), Rate(3)), 333);                    // truncated
  EXPECT_EQ(scale_by_rate(-1'000, Rate(1), Rate(3)), -333);                  // toward zero
  EXPECT_EQ(scale_by_rate(INT64_MAX / 2, Rate(4), Rate(8)), INT64_MAX / 4);  // 128-bit path
  EXPECT_EQ(scale_by_rate(INT64_MAX, 100_Gbps, 100_Gbps), INT64_MAX);
}

TEST(Units, BytesInIsInverseOfSerialization) {
  EXPECT_EQ(bytes_in(1_us, 100_Gbps), 12'500);
  EXPECT_EQ(bytes_in(serialization_delay(4096, 400_Gbps), 400_Gbps), 4096);
}

TEST(Units, ParseTime) {
  EXPECT_EQ(parse_time("2us").value, 2_us);
  EXPECT_EQ(parse_time("1.5 ms").value, Time::us(1500));
  EXPECT_EQ(parse_time("800ns").value, 800_ns);
  EXPECT_EQ(parse_time("100ps").value, 100_ps);
  EXPECT_EQ(parse_time("0").value, Time());
  EXPECT_FALSE(parse_time("2").ok());     // a unit is required
  EXPECT_FALSE(parse_time("-2us").ok());  // negative
  EXPECT_FALSE(parse_time("2 parsecs").ok());
  EXPECT_FALSE(parse_time("0.5ps").ok());  // below one picosecond
  EXPECT_FALSE(parse_time("").ok());
}

TEST(Units, ParseBytesDecimalAndBinary) {
  EXPECT_EQ(parse_bytes("16KiB").value.count(), 16 * 1024);
  EXPECT_EQ(parse_bytes("16KB").value.count(), 16'000);
  EXPECT_EQ(parse_bytes("4096").value.count(), 4096);
  EXPECT_EQ(parse_bytes("4096B").value.count(), 4096);
  EXPECT_EQ(parse_bytes("1.5MB").value.count(), 1'500'000);
  EXPECT_EQ(parse_bytes("2MiB").value.count(), 2 * 1048576);
  EXPECT_EQ(parse_bytes("1GiB").value.count(), 1LL << 30);
  EXPECT_FALSE(parse_bytes("16 kibibytes").ok());
  EXPECT_FALSE(parse_bytes("-1KB").ok());
  EXPECT_FALSE(parse_bytes("0.5B").ok());
}

TEST(Units, ParseRate) {
  EXPECT_EQ(parse_rate("400Gbps").value, 400_Gbps);
  EXPECT_EQ(parse_rate("100 Gbps").value, 100_Gbps);
  EXPECT_EQ(parse_rate("2.5Gbps").value.bps(), 2'500'000'000);
  EXPECT_EQ(parse_rate("800Mbps").value, 800_Mbps);
  EXPECT_EQ(parse_rate("1Tbps").value.bps(), 1'000'000'000'000);
  EXPECT_FALSE(parse_rate("-100Gbps").ok());
  EXPECT_FALSE(parse_rate("0Gbps").ok());
  EXPECT_FALSE(parse_rate("100").ok());
  EXPECT_FALSE(parse_rate("100GB").ok());
}

TEST(Units, Printing) {
  EXPECT_EQ(to_string(2_us), "2us");
  EXPECT_EQ(to_string(Time::ns(1500)), "1.5us");
  // From 1,000 s on, seconds with a fraction and no exponent (the duration horizon).
  EXPECT_EQ(to_string(Time::ps(INT64_MAX / 4)), "2305843.009214s");
  EXPECT_EQ(to_string(Time::ms(1500)), "1500ms");
  EXPECT_EQ(to_string(Time::us(1500)), "1.5ms");
  EXPECT_EQ(to_string(Bytes(16384)), "16KiB");
  EXPECT_EQ(to_string(Bytes(16000)), "16KB");
  EXPECT_EQ(to_string(400_Gbps), "400Gbps");
}

}  // namespace
}  // namespace fabsim

namespace fabsim {
namespace {

// Issue 14: quantities past 64 bits and numbers past long double are errors, not wrapped values
// or a bare "stold" from the library.
TEST(Units, OverflowIsAnErrorNotAWrappedValue) {
  EXPECT_FALSE(parse_rate("9300000Tbps").ok());  // 9.3e18 b/s: used to become negative
  EXPECT_TRUE(parse_rate("9000000Tbps").ok());
  EXPECT_FALSE(parse_time("107days").ok());
  EXPECT_FALSE(parse_time("9300000s").ok());    // 9.3e18 ps
  EXPECT_FALSE(parse_bytes("9300000TB").ok());  // 9.3e18 B
  const std::string huge(5000, '9');
  EXPECT_FALSE(parse_rate(huge + "Gbps").ok());
  EXPECT_FALSE(parse_time(huge + "us").ok());
  EXPECT_FALSE(parse_bytes(huge).ok());
  EXPECT_NE(parse_rate("9300000Tbps").error.find("at most"), std::string::npos);
}

}  // namespace
}  // namespace fabsim
