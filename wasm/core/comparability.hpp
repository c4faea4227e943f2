// Whether a group's two arms still measure the same page loads. A request excluded from one arm and not from the other
// (a Timing-Allow-Origin missing on one origin, one origin failing or timing out) leaves that arm with a different set
// of page loads: its quantiles then differ for a reason that is not the protocol. The report's verdict says so first.
#pragma once

#include <cstddef>
#include <vector>

#include "report.hpp"
#include "request_class.hpp"

namespace h3probe {

// An exclusion is unequal when its share of one arm's measured requests exceeds the other arm's by more than this
// (absolute, a fraction of the arm's requests) and by at least kUnequalExclusionMinRequests requests. Fallbacks are the
// treatment arm's alone by design (UDP blocked): the fallback rate reports them, not this rule.
inline constexpr double kUnequalExclusionShare = 0.05;
inline constexpr std::size_t kUnequalExclusionMinRequests = 5;

struct UnequalExclusion {
    RequestClass cls;
    std::size_t control = 0, treatment = 0;              // requests of this class per arm
    std::size_t control_requests = 0, treatment_requests = 0;  // each arm's measured requests
};

// The classes excluded unequally between the arms of g, in the classes' order; empty: the arms are comparable.
std::vector<UnequalExclusion> unequal_exclusions(const GroupReport& g);

}  // namespace h3probe
