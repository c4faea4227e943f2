// Turns a finished request (fetch outcome + Resource Timing entry) into a Sample.
#pragma once

#include "platform.hpp"
#include "sample.hpp"

namespace h3probe {

// True when the entry's detailed fields were zeroed because the origin sent no Timing-Allow-Origin.
// https://www.w3.org/TR/resource-timing/#sec-timing-allow-origin
bool timing_is_restricted(const ResourceTimingEntry& e);

// Fills result, status, protocol, reuse and phases; phase/idx/origin are left to the caller.
Sample sample_from_outcome(const RequestOutcome& outcome);

}  // namespace h3probe
