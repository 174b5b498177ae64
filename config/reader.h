// A schema-driven reader of one TOML table. Each getter names its key, default, bounds and a
// description, so the loader code is the single source of truth for validation, defaults, the
// effective scenario written into results, and `fabsim list` (which runs the same loaders in
// describe mode, with no table). Unknown keys are errors (STYLE.md rule 12).
#pragma once

#include <cstdint>           // integer bounds
#include <initializer_list>  // enum choices
#include <memory>            // shared context
#include <set>               // keys read
#include <stdexcept>         // ConfigError
#include <string>            // keys, messages
#include <string_view>       // key names
#include <vector>            // lists, docs

#include <nlohmann/json.hpp>  // effective scenario
#include <toml++/toml.h>      // scenario files (Debian ships the compiled library)

#include "core/units.h"

namespace fabsim {

/// The longest duration a scenario may give (any key): Time::max() / 4, about 26.7 days.
inline constexpr Time kDurationHorizon = Time::ps(INT64_MAX / 4);

/// A bad scenario: the message names the file, the key and what was expected.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How the effective scenario records a duration or a rate: to_string()'s readable form when it
/// parses back to the same value, else the exact count in the base unit ("1000000000001ps"), so a
/// result's scenario can be given again. to_string() keeps 6 significant digits and switches to
/// an exponent past 1e6 units ("1e+06ms"), which the parser does not read.
std::string exact_text(Time t);
std::string exact_text(Rate r);

/// One documented parameter, for `fabsim list`.
struct ParamDoc {
  std::string key;
  std::string type;  // "duration", "size", "rate", "integer", "number", "bool", "one of ..."
  std::string default_value;
  std::string description;
};

/// Shared by all sections of one load.
struct ReaderContext {
  std::string file;
  bool describe = false;
  std::vector<ParamDoc> docs;
  std::vector<std::string> warnings;  // Section::warn(), in order
};

class Section {
 public:
  /// `table` may be null (absent section, or describe mode): every key takes its default.
  Section(std::shared_ptr<ReaderContext> ctx, const toml::table* table, std::string path,
          nlohmann::ordered_json* out);

  int64_t integer(std::string_view key, int64_t def, int64_t lo, int64_t hi, std::string_view doc);
  double real(std::string_view key, double def, double lo, double hi, std::string_view doc);
  bool boolean(std::string_view key, bool def, std::string_view doc);
  std::string choice(std::string_view key, std::string_view def,
                     std::initializer_list<std::string_view> choices, std::string_view doc);
  /// The same with the choices of a registry (`Registry::names()`).
  std::string choice(std::string_view key, std::string_view def,
                     const std::vector<std::string_view>& choices, std::string_view doc);
  std::string text(std::string_view key, std::string_view def, std::string_view doc);
  Time time(std::string_view key, Time def, std::string_view doc);
  Bytes bytes(std::string_view key, Bytes def, Bytes lo, Bytes hi, std::string_view doc);
  /// A rate > 0; with `zero_means` non-empty, "0" is also accepted (and documented as such).
  Rate rate(std::string_view key, Rate def, std::string_view doc, std::string_view zero_means = {});
  std::vector<int64_t> integers(std::string_view key, const std::vector<int64_t>& def, int64_t lo,
                                int64_t hi, std::string_view doc);
  /// A list of sizes, each an integer (bytes) or a string with a unit.
  std::vector<Bytes> sizes(std::string_view key, const std::vector<Bytes>& def, Bytes lo,
                           std::string_view doc);
  /// A nested table (absent = all defaults).
  Section table(std::string_view key, std::string_view doc);
  /// An array of tables ([[key]]); empty when absent.
  std::vector<Section> tables(std::string_view key, std::string_view doc);
  bool has(std::string_view key) const;
  /// Whether a getter has read `key` (kinds read their own tables).
  bool was_read(std::string_view key) const { return read_.find(key) != read_.end(); }
  /// True if `key` holds the string `value` (e.g. the sweep variable "$size").
  bool is_text(std::string_view key, std::string_view value) const;
  /// The string at `table.key` of this section, without reading it (nothing recorded, nothing
  /// marked read): a later section's kind that an earlier section's defaults depend on. Empty
  /// when absent or not a string.
  std::string peek_text(std::string_view table, std::string_view key) const;
  /// A list of strings (empty when absent).
  std::vector<std::string> strings(std::string_view key, std::string_view doc);
  /// A nested section that only documents keys (describe mode, e.g. "jobs[i]").
  Section describe_child(std::string_view name) const;

  /// Reports the first key that no getter read. Call after reading every key.
  void finish() const;
  /// An error about `key` of this section.
  [[noreturn]] void fail(std::string_view key, std::string_view expected) const;
  /// A warning about `key` (the run goes on; the command line prints it on stderr): the file,
  /// the line when known, the key and `reason`.
  void warn(std::string_view key, std::string_view reason) const;
  const std::string& path() const { return path_; }
  /// The scenario file being read (or the name given to load_scenario_text), for keys that name
  /// other files relative to it.
  const std::string& file() const { return ctx_->file; }
  bool describing() const { return ctx_->describe; }

 private:
  const toml::node* find(std::string_view key);
  std::string full(std::string_view key) const;
  [[noreturn]] void fail_at(const toml::node* node, std::string_view key,
                            std::string_view expected) const;
  void document(std::string_view key, std::string type, std::string def, std::string_view doc);
  void record(std::string_view key, nlohmann::ordered_json value);

  std::shared_ptr<ReaderContext> ctx_;
  const toml::table* table_;
  std::string path_;
  nlohmann::ordered_json* out_;
  std::set<std::string, std::less<>> read_;
};

/// Applies `key.path=value` to `root`: the value is parsed as TOML, else taken as a string.
void apply_override(toml::table& root, const std::string& assignment, const std::string& origin);

}  // namespace fabsim
