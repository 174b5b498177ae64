// RLTP, the reliable lightweight transport of Direct xPU (seed 004 §3.1, §3.3): RDMA-like
// reads and writes between device NICs over UDP, recovered by IRN-style selective repeat
// (bitmap + NACK). Registered in scenario/kinds.cpp.
#pragma once

#include <memory>  // unique_ptr

#include "transport/kind.h"

namespace fabsim {

std::unique_ptr<TransportKind> make_rltp_kind();

}  // namespace fabsim
