// The `[transport.dcqcn]` keys, declared once beside the algorithm (REFERENCE.md §1.5-1.6).
#pragma once

#include "cc/dcqcn.h"
#include "config/reader.h"

namespace fabsim {

/// Declares and reads DCQCN's keys into `c`; presets scale with the NIC rate `line`.
void load_dcqcn(Section& d, DcqcnConfig& c, Rate line);

}  // namespace fabsim
