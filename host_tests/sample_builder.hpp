// Builds samples for host tests: the fields a test is about, and a plausible rest.
#pragma once

#include <optional>

#include "sample.hpp"

namespace h3probe::test {

inline Sample make_sample(Phase phase, int idx, Proto origin, const char* protocol, std::optional<double> network_ms,
                          SampleResult result = SampleResult::ok) {
    Sample s;
    s.phase = phase;
    s.idx = idx;
    s.origin = origin;
    s.protocol = protocol;
    s.result = result;
    s.http_status = 204;
    s.network_ms = network_ms;
    return s;
}

}  // namespace h3probe::test
