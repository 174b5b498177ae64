// The registration lines of every kind; see kinds.h. One line per kind: the order here is the
// order `fabsim list` and docs/SCENARIOS.md show, and the first kind of each family is not
// implicitly the default (each family's key declares its own default).
#include "scenario/kinds.h"

#include "cc/hpcc/hpcc.h"
#include "cc/nscc/nscc.h"
#include "cc/swift/swift.h"
#include "cc/timely/timely.h"
#include "gse/fabric.h"
#include "transport/rltp/rltp.h"
#include "transport/uet/uet.h"
#include "workload/cdf/cdf.h"
#include "workload/external/external.h"
#include "workload/trace/chakra.h"
#include "workload/trace/simai.h"
#include "workload/training/training.h"

namespace fabsim {

const Registries& registries() {
  static const Registries r = [] {
    Registries k;
    k.topologies.add(make_leaf_spine_kind());
    k.topologies.add(make_rail_kind());
    k.topologies.add(make_fat_tree_kind());
    k.topologies.add(make_single_switch_kind());

    k.policies.add(make_ecmp_policy());
    k.policies.add(make_spray_policy());
    k.policies.add(make_flowlet_policy());

    k.fabrics.add(make_ethernet_fabric());
    k.fabrics.add(make_gse_fabric());

    k.ccs.add(dcqcn_cc());
    k.ccs.add(none_cc());
    k.ccs.add(timely_cc());
    k.ccs.add(hpcc_cc());
    k.ccs.add(swift_cc());
    k.ccs.add(nscc_cc());

    k.transports.add(make_datagram_kind());
    k.transports.add(make_roce_kind());
    k.transports.add(make_rltp_kind());
    k.transports.add(make_uet_kind());

    k.workloads.add(make_permutation_kind());
    k.workloads.add(make_incast_kind());
    k.workloads.add(make_flows_kind());
    k.workloads.add(make_jobs_kind());
    k.workloads.add(make_cdf_kind());
    k.workloads.add(make_training_kind());
    k.workloads.add(make_external_kind());
    k.workloads.add(make_simai_kind());
    k.workloads.add(make_chakra_kind());

    k.security.add(make_no_security());
    k.security.add(make_physec_link());
    k.security.add(make_physec_channel());
    k.security.add(make_macsec());
    k.security.add(make_ipsec());
    k.security.add(make_psp());

    k.faults.add(make_down_fault());
    k.faults.add(make_up_fault());
    k.faults.add(make_flap_fault());
    k.faults.add(make_ber_fault());
    k.faults.add(make_degrade_fault());
    return k;
  }();
  return r;
}

}  // namespace fabsim
