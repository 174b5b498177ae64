// Schema-driven TOML reading; see reader.h.
#include "config/reader.h"

#include <fmt/format.h>  // messages

#include <cmath>    // isfinite
#include <sstream>  // node printing

namespace fabsim {
namespace {

std::string show(const toml::node& n) {
  std::ostringstream os;
  if (const auto* s = n.as_string()) {
    os << '"' << s->get() << '"';
  } else {
    n.visit([&os](const auto& v) { os << v; });
  }
  return os.str();
}

std::string join(const std::vector<std::string_view>& items) {
  std::string out;
  for (auto it : items) {
    if (!out.empty()) out += ", ";
    out += fmt::format("\"{}\"", it);
  }
  return out;
}

}  // namespace

std::string exact_text(Time t) {
  std::string text = to_string(t);
  const auto back = parse_time(text);
  return back.ok() && back.value == t ? text : std::to_string(t.ps()) + "ps";
}

std::string exact_text(Rate r) {
  std::string text = to_string(r);
  const auto back = parse_rate(text);
  return back.ok() && back.value == r ? text : std::to_string(r.bps()) + "bps";
}

Section::Section(std::shared_ptr<ReaderContext> ctx, const toml::table* table, std::string path,
                 nlohmann::ordered_json* out)
    : ctx_(std::move(ctx)), table_(table), path_(std::move(path)), out_(out) {}

std::string Section::full(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool Section::has(std::string_view key) const {
  return table_ != nullptr && table_->get(key) != nullptr;
}

bool Section::is_text(std::string_view key, std::string_view value) const {
  if (table_ == nullptr) return false;
  const auto* n = table_->get(key);
  return n != nullptr && n->is_string() && n->as_string()->get() == value;
}

std::string Section::peek_text(std::string_view table, std::string_view key) const {
  if (table_ == nullptr) return {};
  const auto* t = table_->get_as<toml::table>(table);
  const auto* n = t == nullptr ? nullptr : t->get_as<std::string>(key);
  return n == nullptr ? std::string() : n->get();
}

std::vector<std::string> Section::strings(std::string_view key, std::string_view doc) {
  document(key, "list of strings", "[]", doc);
  std::vector<std::string> v;
  if (const auto* n = find(key)) {
    const auto* arr = n->as_array();
    if (arr == nullptr) fail_at(n, key, "a list of strings");
    for (const auto& el : *arr) {
      if (!el.is_string()) fail_at(n, key, "a list of strings");
      v.push_back(el.as_string()->get());
    }
  }
  record(key, v);
  return v;
}

Section Section::describe_child(std::string_view name) const {
  return Section(ctx_, nullptr, full(name), nullptr);
}

const toml::node* Section::find(std::string_view key) {
  read_.emplace(key);
  return table_ == nullptr ? nullptr : table_->get(key);
}

void Section::fail(std::string_view key, std::string_view expected) const {
  fail_at(table_ == nullptr ? nullptr : table_->get(key), key, expected);
}

void Section::warn(std::string_view key, std::string_view reason) const {
  const toml::node* node = table_ == nullptr ? nullptr : table_->get(key);
  std::string where = ctx_->file;
  if (node != nullptr && node->source().begin.line > 0) {
    where += fmt::format(":{}", node->source().begin.line);
  }
  ctx_->warnings.push_back(fmt::format("{}: key '{}': {}", where, full(key), reason));
}

void Section::fail_at(const toml::node* node, std::string_view key,
                      std::string_view expected) const {
  std::string where = ctx_->file;
  if (node != nullptr && node->source().begin.line > 0) {
    where += fmt::format(":{}", node->source().begin.line);
  }
  std::string got = node != nullptr ? fmt::format(", got {}", show(*node)) : "";
  throw ConfigError(fmt::format("{}: key '{}': expected {}{}", where, full(key), expected, got));
}

void Section::document(std::string_view key, std::string type, std::string def,
                       std::string_view doc) {
  if (ctx_->describe)
    ctx_->docs.push_back({full(key), std::move(type), std::move(def), std::string(doc)});
}

void Section::record(std::string_view key, nlohmann::ordered_json value) {
  if (out_ != nullptr) (*out_)[std::string(key)] = std::move(value);
}

int64_t Section::integer(std::string_view key, int64_t def, int64_t lo, int64_t hi,
                         std::string_view doc) {
  document(key, "integer", std::to_string(def), doc);
  int64_t v = def;
  if (const auto* n = find(key)) {
    const auto got = n->value_exact<int64_t>();
    if (!got || *got < lo || *got > hi) {
      fail_at(n, key, fmt::format("an integer in [{}, {}]", lo, hi));
    }
    v = *got;
  }
  record(key, v);
  return v;
}

double Section::real(std::string_view key, double def, double lo, double hi, std::string_view doc) {
  document(key, "number", fmt::format("{}", def), doc);
  double v = def;
  if (const auto* n = find(key)) {
    std::optional<double> got;
    if (n->is_floating_point()) got = n->as_floating_point()->get();
    if (n->is_integer()) got = static_cast<double>(n->as_integer()->get());
    // NaN and infinity fail every comparison, so they are refused before the range check.
    if (!got || !std::isfinite(*got) || *got < lo || *got > hi) {
      fail_at(n, key, fmt::format("a finite number in [{}, {}]", lo, hi));
    }
    v = *got;
  }
  record(key, v);
  return v;
}

bool Section::boolean(std::string_view key, bool def, std::string_view doc) {
  document(key, "bool", def ? "true" : "false", doc);
  bool v = def;
  if (const auto* n = find(key)) {
    if (!n->is_boolean()) fail_at(n, key, "true or false");
    v = n->as_boolean()->get();
  }
  record(key, v);
  return v;
}

std::string Section::choice(std::string_view key, std::string_view def,
                            std::initializer_list<std::string_view> choices, std::string_view doc) {
  return choice(key, def, std::vector<std::string_view>(choices), doc);
}

std::string Section::choice(std::string_view key, std::string_view def,
                            const std::vector<std::string_view>& choices, std::string_view doc) {
  document(key, "one of " + join(choices), std::string(def), doc);
  std::string v(def);
  if (const auto* n = find(key)) {
    bool ok = n->is_string();
    if (ok) {
      v = n->as_string()->get();
      ok = false;
      for (auto c : choices) ok = ok || c == v;
    }
    if (!ok) fail_at(n, key, "one of " + join(choices));
  }
  record(key, v);
  return v;
}

std::string Section::text(std::string_view key, std::string_view def, std::string_view doc) {
  document(key, "string", std::string(def), doc);
  std::string v(def);
  if (const auto* n = find(key)) {
    if (!n->is_string()) fail_at(n, key, "a string");
    v = n->as_string()->get();
  }
  record(key, v);
  return v;
}

Time Section::time(std::string_view key, Time def, std::string_view doc) {
  document(key, "duration", to_string(def), doc);
  Time v = def;
  if (const auto* n = find(key)) {
    const bool zero = n->is_integer() && n->as_integer()->get() == 0;
    if (!zero) {
      if (!n->is_string()) fail_at(n, key, parse_time("?").error);
      const auto parsed = parse_time(n->as_string()->get());
      if (!parsed.ok()) fail_at(n, key, parsed.error);
      // The simulation's horizon: any duration a scenario gives stays below a quarter of the
      // largest picosecond count, so the sums the engine forms (now + delay, a stop time plus
      // path delays and timers) cannot overflow simulated time.
      if (parsed.value > kDurationHorizon) {
        fail_at(n, key,
                fmt::format("a duration of at most {} (the simulation's horizon)",
                            to_string(kDurationHorizon)));
      }
      v = parsed.value;
    } else {
      v = Time();
    }
  }
  record(key, exact_text(v));
  return v;
}

Bytes Section::bytes(std::string_view key, Bytes def, Bytes lo, Bytes hi, std::string_view doc) {
  document(key, "size", to_string(def), doc);
  Bytes v = def;
  if (const auto* n = find(key)) {
    if (n->is_integer()) {
      v = Bytes(n->as_integer()->get());
      if (v.count() < 0) fail_at(n, key, parse_bytes("?").error);
    } else if (n->is_string()) {
      const auto parsed = parse_bytes(n->as_string()->get());
      if (!parsed.ok()) fail_at(n, key, parsed.error);
      v = parsed.value;
    } else {
      fail_at(n, key, parse_bytes("?").error);
    }
    if (v < lo || v > hi) {
      fail_at(n, key, fmt::format("a size in [{}, {}]", to_string(lo), to_string(hi)));
    }
  }
  record(key, v.count());
  return v;
}

Rate Section::rate(std::string_view key, Rate def, std::string_view doc,
                   std::string_view zero_means) {
  document(key, "rate", def.bps() == 0 ? "0" : to_string(def),
           zero_means.empty() ? std::string(doc) : fmt::format("{} (0 = {})", doc, zero_means));
  Rate v = def;
  if (const auto* n = find(key)) {
    const bool zero = (n->is_integer() && n->as_integer()->get() == 0) ||
                      (n->is_string() && n->as_string()->get() == "0");
    if (zero && !zero_means.empty()) {
      v = Rate(0);
    } else {
      if (!n->is_string()) fail_at(n, key, parse_rate("?").error);
      const auto parsed = parse_rate(n->as_string()->get());
      if (!parsed.ok()) fail_at(n, key, parsed.error);
      v = parsed.value;
    }
  }
  record(key, v.bps() == 0 ? std::string("0") : exact_text(v));
  return v;
}

std::vector<int64_t> Section::integers(std::string_view key, const std::vector<int64_t>& def,
                                       int64_t lo, int64_t hi, std::string_view doc) {
  std::string d = "[";
  for (size_t i = 0; i < def.size(); ++i) d += (i ? ", " : "") + std::to_string(def[i]);
  document(key, "list of integers", d + "]", doc);
  std::vector<int64_t> v = def;
  if (const auto* n = find(key)) {
    const auto* arr = n->as_array();
    const std::string expected = fmt::format("a list of integers in [{}, {}]", lo, hi);
    if (arr == nullptr) fail_at(n, key, expected);
    v.clear();
    for (const auto& el : *arr) {
      const auto got = el.value_exact<int64_t>();
      if (!got || *got < lo || *got > hi) fail_at(n, key, expected);
      v.push_back(*got);
    }
  }
  record(key, v);
  return v;
}

std::vector<Bytes> Section::sizes(std::string_view key, const std::vector<Bytes>& def, Bytes lo,
                                  std::string_view doc) {
  std::string d = "[";
  for (size_t i = 0; i < def.size(); ++i) d += (i ? ", " : "") + to_string(def[i]);
  document(key, "list of sizes", d + "]", doc);
  std::vector<Bytes> v = def;
  if (const auto* n = find(key)) {
    const auto* arr = n->as_array();
    const std::string expected =
        fmt::format("a list of sizes of at least {} (e.g. [\"1MiB\", \"2MiB\"])", to_string(lo));
    if (arr == nullptr) fail_at(n, key, expected);
    v.clear();
    for (const auto& el : *arr) {
      Parsed<Bytes> p;
      if (el.is_integer()) {
        p.value = Bytes(el.as_integer()->get());
      } else if (el.is_string()) {
        p = parse_bytes(el.as_string()->get());
      } else {
        p.error = "x";
      }
      if (!p.ok() || p.value < lo) fail_at(n, key, expected);
      v.push_back(p.value);
    }
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (auto b : v) j.push_back(b.count());
  record(key, j);
  return v;
}

Section Section::table(std::string_view key, std::string_view doc) {
  if (ctx_->describe) ctx_->docs.push_back({full(key), "table", "", std::string(doc)});
  const auto* n = find(key);
  if (n != nullptr && !n->is_table()) fail_at(n, key, "a table");
  nlohmann::ordered_json* child = nullptr;
  if (out_ != nullptr) {
    (*out_)[std::string(key)] = nlohmann::ordered_json::object();
    child = &(*out_)[std::string(key)];
  }
  return Section(ctx_, n == nullptr ? nullptr : n->as_table(), full(key), child);
}

std::vector<Section> Section::tables(std::string_view key, std::string_view doc) {
  if (ctx_->describe) ctx_->docs.push_back({full(key), "array of tables", "[]", std::string(doc)});
  std::vector<Section> out;
  const auto* n = find(key);
  if (n == nullptr) return out;
  const auto* arr = n->as_array();
  if (arr == nullptr || !arr->is_array_of_tables()) fail_at(n, key, "an array of tables [[...]]");
  nlohmann::ordered_json* list = nullptr;
  if (out_ != nullptr) {
    (*out_)[std::string(key)] = nlohmann::ordered_json::array();
    list = &(*out_)[std::string(key)];
    for (size_t i = 0; i < arr->size(); ++i) list->push_back(nlohmann::ordered_json::object());
  }
  for (size_t i = 0; i < arr->size(); ++i) {
    out.emplace_back(ctx_, (*arr)[i].as_table(), fmt::format("{}[{}]", full(key), i),
                     list == nullptr ? nullptr : &(*list)[i]);
  }
  return out;
}

void Section::finish() const {
  if (table_ == nullptr) return;
  for (auto&& [k, v] : *table_) {
    if (read_.find(k.str()) == read_.end()) {
      std::string where = ctx_->file;
      if (v.source().begin.line > 0) where += fmt::format(":{}", v.source().begin.line);
      throw ConfigError(fmt::format("{}: unknown key '{}' (see `fabsim list` for the keys of '{}')",
                                    where, full(k.str()), path_.empty() ? "the scenario" : path_));
    }
  }
}

void apply_override(toml::table& root, const std::string& assignment, const std::string& origin) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(fmt::format("{}: '{}': expected key=value", origin, assignment));
  }
  const std::string key = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  toml::table* t = &root;
  size_t start = 0;
  for (;;) {
    const auto dot = key.find('.', start);
    std::string part =
        key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    // An optional index selects one table of an array of tables: jobs[0].
    long index = -1;
    if (const auto br = part.find('['); br != std::string::npos && part.back() == ']') {
      try {
        index = std::stol(part.substr(br + 1, part.size() - br - 2));
      } catch (const std::exception&) {
        index = -2;
      }
      if (index < 0) {
        throw ConfigError(fmt::format("{}: key '{}': '{}' has a bad index", origin, key, part));
      }
      part = part.substr(0, br);
    }
    if (part.empty())
      throw ConfigError(fmt::format("{}: key '{}': empty path element", origin, key));
    if (dot == std::string::npos) {
      if (index >= 0) {
        throw ConfigError(
            fmt::format("{}: key '{}': the last element cannot be indexed", origin, key));
      }
      try {
        auto parsed = toml::parse("v = " + value);
        t->insert_or_assign(part, *parsed.get("v"));
      } catch (const toml::parse_error&) {
        t->insert_or_assign(part, value);
      }
      return;
    }
    auto* next = t->get(part);
    if (index >= 0) {
      auto* arr = next == nullptr ? nullptr : next->as_array();
      if (arr == nullptr || static_cast<size_t>(index) >= arr->size() ||
          !(*arr)[index].is_table()) {
        throw ConfigError(
            fmt::format("{}: key '{}': '{}' has no table number {}", origin, key, part, index));
      }
      t = (*arr)[index].as_table();
    } else {
      if (next == nullptr) {
        t->insert(part, toml::table{});
        next = t->get(part);
      }
      if (!next->is_table()) {
        throw ConfigError(fmt::format("{}: key '{}': '{}' is not a table", origin, key, part));
      }
      t = next->as_table();
    }
    start = dot + 1;
  }
}

}  // namespace fabsim
