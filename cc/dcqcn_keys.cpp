// The DCQCN keys; see dcqcn_keys.h.
#include "cc/dcqcn_keys.h"

#include <limits>  // bounds

namespace fabsim {

void load_dcqcn(Section& d, DcqcnConfig& c, Rate line) {
  c.enabled = d.boolean("enabled", true, "DCQCN rate control (off = always line rate)");
  const auto preset = d.choice("preset", "paper", {"paper", "connectx"},
                               "parameter set: paper (DCQCN SIGCOMM'15 / htsim) or connectx "
                               "(HPCC ns-3 mlx mode); the keys below override it");
  const bool enabled = c.enabled;
  c = preset == "connectx" ? DcqcnConfig::connectx(line) : DcqcnConfig::paper();
  c.enabled = enabled;
  const bool cx = preset == "connectx";
  c.g = d.real("g", c.g, 0.0, 1.0, "alpha EWMA gain");
  c.initial_alpha = d.real("initial_alpha", c.initial_alpha, 0.0, 1.0, "alpha at start");
  c.alpha_period = d.time("alpha_period", c.alpha_period,
                          cx ? "alpha update period t_alpha" : "alpha decay period K");
  c.increase_period = d.time("increase_period", c.increase_period,
                             cx ? "rate increase timer t_inc (RP_TIMER)" : "rate increase timer T");
  c.decrease_period =
      d.time("decrease_period", c.decrease_period, "rate decrease check t_dec (connectx only)");
  c.byte_counter = d.bytes("byte_counter", Bytes(c.byte_counter), Bytes(0),
                           Bytes(std::numeric_limits<int64_t>::max() / 16),
                           "byte counter B (paper only; 0 = off)")
                       .count();
  c.fast_recovery_steps =
      static_cast<int>(d.integer("fast_recovery_steps", c.fast_recovery_steps, 0, 1000, "F"));
  c.rate_ai = d.rate("rate_ai", c.rate_ai, "additive increase step R_AI");
  c.rate_hai = d.rate("rate_hai", c.rate_hai,
                      "hyper increase step R_HAI [UNVERIFIED for the paper set: 10 x R_AI]");
  c.min_rate = d.rate("min_rate", c.min_rate, "lowest rate a cut can reach");
  c.rate_on_first_cnp = d.real("rate_on_first_cnp", c.rate_on_first_cnp, 0.0, 1.0,
                               "connectx: RC x this at the first CNP");
  c.clamp_target = d.boolean("clamp_target", c.clamp_target, "connectx: RT <- RC at every cut");
  c.cnp_interval = d.time("cnp_interval", c.cnp_interval,
                          "notification point: at most one CNP per QP per interval");
  if (!d.describing()) {
    if (c.alpha_period.ps() <= 0) d.fail("alpha_period", "a positive duration");
    if (c.increase_period.ps() <= 0) d.fail("increase_period", "a positive duration");
    if (c.decrease_period.ps() <= 0) d.fail("decrease_period", "a positive duration");
    if (c.min_rate > line) d.fail("min_rate", "a rate at most the NIC rate");
  }
}

}  // namespace fabsim
