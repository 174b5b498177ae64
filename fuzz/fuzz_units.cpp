// libFuzzer target on the unit parser (core/units.h): the bytes are one quantity as a scenario
// writes it ("2us", "16KiB", "400Gbps"), given to the duration, size and rate parsers. Besides
// crashes and sanitizer reports, these are findings:
//   - a value accepted outside its type's range (negative, zero rate, past 9.2e18);
//   - an accepted value whose recorded form (the effective scenario in every result file:
//     exact_text() for durations and rates, the count for sizes) does not parse back to it.
#include <cstddef>      // size_t
#include <cstdint>      // uint8_t
#include <cstdio>       // the finding's message
#include <string>       // printed forms
#include <string_view>  // the input

#include "config/reader.h"  // exact_text
#include "core/units.h"

namespace {

constexpr size_t kMaxInput = 256;  // a quantity is a few characters; digits past this add nothing
constexpr int64_t kMaxValue = 9'200'000'000'000'000'000;  // the parsers' documented limit

[[noreturn]] void finding(const char* what, std::string_view input, const std::string& printed) {
  std::fprintf(stderr, "fuzz_units: %s: input \"%.*s\" printed \"%s\"\n", what,
               static_cast<int>(input.size()), input.data(), printed.c_str());
  __builtin_trap();
}

// The form a result file records: exact_text() for durations and rates, the count of bytes.
std::string recorded(fabsim::Time t) {
  return fabsim::exact_text(t);
}
std::string recorded(fabsim::Rate r) {
  return fabsim::exact_text(r);
}
std::string recorded(fabsim::Bytes b) {
  return std::to_string(b.count());
}

template <typename T, typename Parse, typename Count>
void check(std::string_view input, Parse parse, Count count, int64_t lowest) {
  const fabsim::Parsed<T> p = parse(input);
  if (!p.ok()) return;
  const int64_t v = count(p.value);
  const std::string printed = recorded(p.value);
  if (v < lowest || v > kMaxValue) finding("accepted out of range", input, printed);
  const fabsim::Parsed<T> again = parse(printed);
  if (!again.ok() || count(again.value) != v) {
    finding("recorded form does not parse back to the value", input, printed);
  }
  (void)fabsim::to_string(p.value);  // the readable form of tables: any value prints
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInput) return -1;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check<fabsim::Time>(
      input, [](std::string_view s) { return fabsim::parse_time(s); },
      [](fabsim::Time t) { return t.ps(); }, 0);
  check<fabsim::Bytes>(
      input, [](std::string_view s) { return fabsim::parse_bytes(s); },
      [](fabsim::Bytes b) { return b.count(); }, 0);
  check<fabsim::Rate>(
      input, [](std::string_view s) { return fabsim::parse_rate(s); },
      [](fabsim::Rate r) { return r.bps(); }, 1);
  return 0;
}
