// The `external` workload kind (issue 19 item 5): the scenario starts no traffic of its own; a
// program that embeds fabsim posts every message through the embedding API (api/fabsim_api.h,
// docs/EMBEDDING.md), as ASTRA-sim or SimAI would through their network backend interface.
// Registered in scenario/kinds.cpp.
#pragma once

#include <memory>  // unique_ptr

#include "workload/kind.h"

namespace fabsim {

std::unique_ptr<WorkloadKind> make_external_kind();

}  // namespace fabsim
