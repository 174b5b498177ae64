// Registries of kinds (DESIGN.md "Seams"; STYLE.md 12-13; issue 13 item 1).
//
// A family (topology, path policy, transport, congestion control, fabric, workload, security)
// is an abstract `Kind` class declared beside its models, in its own layer. A kind is one
// object of that class: its name, a one-line description, a loader that declares and reads its
// keys once through `Section` (the same call gives the default, the unit, the range and the doc,
// so `fabsim list`, the TOML loader, `validate`, `--set` and docs/SCENARIOS.md agree by
// construction), a builder, and what it adds to the summary. The kind's typed config travels
// through the scenario as a `KindConfig` (owned, copied with the scenario, read back with its
// own type). Kind names are compared here and nowhere else.
#pragma once

#include <memory>       // unique_ptr
#include <string>       // names
#include <string_view>  // lookups
#include <typeinfo>     // typeid for a clear error on a wrong cast
#include <utility>      // move
#include <vector>       // entries

#include "core/assert.h"

namespace fabsim {

/// A kind's typed configuration, type-erased for the scenario and copied with it (sweeps copy
/// a scenario per case). Read back with `get<T>()`; the type is checked in every build.
class KindConfig {
 public:
  KindConfig() = default;
  template <typename T> static KindConfig of(T value) {
    KindConfig c;
    c.holder_ = std::make_unique<Holder<T>>(std::move(value));
    return c;
  }
  KindConfig(const KindConfig& o) : holder_(o.holder_ ? o.holder_->clone() : nullptr) {}
  KindConfig& operator=(const KindConfig& o) {
    if (this != &o) holder_ = o.holder_ ? o.holder_->clone() : nullptr;
    return *this;
  }
  KindConfig(KindConfig&&) noexcept = default;
  KindConfig& operator=(KindConfig&&) noexcept = default;
  ~KindConfig() = default;

  bool empty() const { return holder_ == nullptr; }
  template <typename T> bool holds() const {
    return holder_ != nullptr && holder_->type() == typeid(T);
  }
  template <typename T> const T& get() const {
    FABSIM_CHECK(holds<T>());
    return static_cast<const Holder<T>*>(holder_.get())->value;
  }
  template <typename T> T& get() {
    FABSIM_CHECK(holds<T>());
    return static_cast<Holder<T>*>(holder_.get())->value;
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual std::unique_ptr<Base> clone() const = 0;
    virtual const std::type_info& type() const = 0;
  };
  template <typename T> struct Holder final : Base {
    explicit Holder(T v) : value(std::move(v)) {}
    std::unique_ptr<Base> clone() const override { return std::make_unique<Holder>(value); }
    const std::type_info& type() const override { return typeid(T); }
    T value;
  };
  std::unique_ptr<Base> holder_;
};

/// The kinds of one family, in registration order (the order `fabsim list` prints).
/// `Kind` has `name()` and `description()`.
template <typename Kind> class Registry {
 public:
  /// Registers a kind; its name must be new.
  void add(std::unique_ptr<Kind> kind) {
    add(*kind);
    owned_.push_back(std::move(kind));
  }
  /// Registers a kind that lives elsewhere (an immutable object the family also uses as its
  /// default, e.g. DCQCN for RoCE QPs built without a scenario).
  void add(const Kind& kind) {
    FABSIM_CHECK(find(kind.name()) == nullptr);
    kinds_.push_back(&kind);
  }
  /// The kind called `name`, or null.
  const Kind* find(std::string_view name) const {
    for (const Kind* k : kinds_) {
      if (k->name() == name) return k;
    }
    return nullptr;
  }
  std::vector<std::string_view> names() const {
    std::vector<std::string_view> out;
    for (const auto& k : kinds_) out.push_back(k->name());
    return out;
  }
  const std::vector<const Kind*>& kinds() const { return kinds_; }

 private:
  std::vector<const Kind*> kinds_;
  std::vector<std::unique_ptr<Kind>> owned_;
};

/// A chosen kind and its typed configuration.
template <typename Kind> struct Choice {
  const Kind* kind = nullptr;
  KindConfig config;
  std::string_view name() const { return kind->name(); }
  template <typename T> T& as() { return config.get<T>(); }
  template <typename T> const T& as() const { return config.get<T>(); }
};

}  // namespace fabsim
